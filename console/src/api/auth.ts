import { createAuthClient } from '@portcullis/client';
import { authBasePath } from './client.ts';

/**
 * Signing in and out goes through better-auth's own client against the auth API, as any app of ours
 * does (@portcullis/client's, with the plugins of what Portcullis serves): the console is one more
 * better-auth client, with no back door.
 */
export const authClient = createAuthClient({
  baseURL: typeof window === 'undefined' ? 'http://localhost' : window.location.origin,
  basePath: authBasePath(),
});

/** Email, or a username when the name given has no `@`. */
export async function signIn(identifier: string, password: string): Promise<{ readonly error: string | null }> {
  const answer = identifier.includes('@')
    ? await authClient.signIn.email({ email: identifier, password })
    : await authClient.signIn.username({ username: identifier, password });
  return { error: answer.error ? (answer.error.message ?? answer.error.statusText ?? 'Sign-in failed') : null };
}

export async function signOut(): Promise<void> {
  await authClient.signOut();
}
