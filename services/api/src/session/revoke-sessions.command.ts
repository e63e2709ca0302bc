import { streams } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import type { SessionPorts } from './ports.ts';
import { endAllSessions } from './session-lifecycle.ts';

/**
 * revoke-sessions and revoke-other-sessions: every session of the user, but the caller's own with `except`
 * (and the impersonation sessions they opened), decided on the user's session index.
 */
export async function revokeSessions(
  ports: Pick<SessionPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly userId: string; readonly except: string | null },
): Promise<void> {
  const { userId, except } = command;
  await ports.commands.handle(
    { name: except === null ? 'session.revoke-all' : 'session.revoke-others', request, actorId: userId, serialize: [streams.userSessions(userId)], settle: 'revocation' },
    (unit) => (except === null ? endAllSessions(unit, userId, 'revoked_all') : endAllSessions(unit, userId, 'revoked_others', { except })),
  );
}
