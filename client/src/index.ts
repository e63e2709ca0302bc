import { createAuthClient as createBetterAuthClient } from 'better-auth/client';
import type { BetterAuthClientOptions } from 'better-auth/client';
import { portcullisPlugins, type PortcullisPlugins } from './auth-client.ts';

export { portcullisPlugins, type PortcullisPlugins } from './auth-client.ts';
export {
  callEndpoint,
  endpointUrl,
  mergeFetchOptions,
  queryString,
  textOf,
  type Answer,
  type CallArguments,
  type CallInput,
  type EndpointTarget,
} from './endpoint-call.ts';
export {
  ApiError,
  fetchWithRetries,
  refusalOf,
  retryDelay,
  type BearerAuth,
  type ExponentialRetry,
  type FetchOptions,
  type FetchRequest,
  type LinearRetry,
  type Resolvable,
  type RetryCondition,
  type RetryOptions,
  type TransportErrorCode,
} from './fetch.ts';
export { createOpsClient, opsClientEndpoints, type FollowRebuildOptions, type OpsClient, type OpsClientOptions } from './ops-client.ts';

/** What `createAuthClient` takes: better-auth's options; `plugins` are added to Portcullis's own. */
export type PortcullisAuthClientOptions = Omit<BetterAuthClientOptions, 'plugins'>;

/**
 * better-auth's client (`better-auth/client`) with the plugins of what Portcullis serves already in
 * place: `client.organization.*`, `client.signIn.username`, `client.admin.*` beside email and password.
 */
export function createAuthClient<const O extends PortcullisAuthClientOptions>(options?: O): ReturnType<typeof createBetterAuthClient<O & { plugins: PortcullisPlugins }>> {
  return createBetterAuthClient({ ...options, plugins: portcullisPlugins() } as O & { plugins: PortcullisPlugins });
}
