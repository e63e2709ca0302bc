import { createAuthClient as createBetterAuthReactClient } from 'better-auth/react';
import { portcullisPlugins, type PortcullisPlugins } from './auth-client.ts';
import type { PortcullisAuthClientOptions } from './index.ts';

export { portcullisPlugins, type PortcullisPlugins } from './auth-client.ts';
export type { PortcullisAuthClientOptions } from './index.ts';

/**
 * better-auth's React client (`better-auth/react`: `useSession` and the other hooks) with the plugins of what
 * Portcullis serves already in place, as `createAuthClient` of `@portcullis/client` is for other code.
 */
export function createAuthClient<const O extends PortcullisAuthClientOptions>(options?: O): ReturnType<typeof createBetterAuthReactClient<O & { plugins: PortcullisPlugins }>> {
  return createBetterAuthReactClient({ ...options, plugins: portcullisPlugins() } as O & { plugins: PortcullisPlugins });
}
