import { streams } from '@portcullis/contracts';
import { sessionIdForTokenHash, type RequestMetadata } from '@portcullis/platform';
import type { SessionPorts } from './ports.ts';
import { decideOnSession } from './session-lifecycle.ts';
import { sessionIdByTokenHash } from './session-queries.ts';

/**
 * revoke-session: one of the caller's sessions, by its token's hash. The session's stream is named by the
 * hash (see `sessionIdForTokenHash`); a session from before that rule is found through the session table.
 * Unknown or someone else's: nothing happens, and the caller is told success, as better-auth answers.
 */
export async function revokeSession(
  ports: Pick<SessionPorts, 'commands' | 'pool'>,
  request: RequestMetadata,
  command: { readonly byUserId: string; readonly tokenHash: string },
): Promise<void> {
  const { byUserId, tokenHash } = command;
  const derived = sessionIdForTokenHash(tokenHash);
  await ports.commands.handle({ name: 'session.revoke', request, actorId: byUserId, serialize: [streams.session(derived)], settle: 'revocation' }, async (unit) => {
    const own = await decideOnSession(unit, derived, { type: 'revoke', byUserId, reason: 'revoked' });
    if (own.length > 0) return;
    const legacy = await sessionIdByTokenHash(ports, tokenHash);
    if (legacy && legacy !== derived) await decideOnSession(unit, legacy, { type: 'revoke', byUserId, reason: 'revoked' });
  });
}
