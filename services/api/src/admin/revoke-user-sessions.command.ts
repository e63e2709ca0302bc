import { streams } from '@portcullis/contracts';
import { hashToken, sessionIdForTokenHash, type RequestMetadata } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { decideOnSession, endAllSessions } from '../session/session-lifecycle.ts';
import { sessionIdByTokenHash } from '../session/session-queries.ts';
import { sessionModel } from '../session/session.decider.ts';
import type { AdminAuthority } from './access.decider.ts';
import { decideOnTarget } from './admin-guard.ts';

/**
 * revoke-user-session: one session, by its token or by the hash list-user-sessions shows in its place, ended
 * for its owner, whoever's it is, under the rule for admins acting on admins. An unknown token is a success,
 * as better-auth answers.
 */
export async function revokeUserSession(
  ports: Pick<AdminPorts, 'commands' | 'pool'>,
  request: RequestMetadata,
  command: { readonly by: AdminAuthority; readonly sessionToken: string },
): Promise<void> {
  const { by, sessionToken } = command;
  const tokenHash = /^[0-9a-f]{64}$/.test(sessionToken) ? sessionToken : hashToken(sessionToken);
  const derived = sessionIdForTokenHash(tokenHash);
  await ports.commands.handle(
    { name: 'admin.revoke-user-session', request, actorId: by.userId, actorKind: 'admin', serialize: [streams.session(derived)], settle: 'revocation' },
    async (unit) => {
      // Sessions from before ids were derived from the hash are found through the session table.
      const candidates = [derived, ...[await sessionIdByTokenHash(ports, tokenHash)].filter((id): id is string => id !== null && id !== derived)];
      for (const sessionId of candidates) {
        const state = (await unit.load(streams.session(sessionId), sessionModel)).state;
        if (state.status !== 'active' || state.tokenHash !== tokenHash) continue;
        await decideOnTarget(unit, by, state.userId);
        await decideOnSession(unit, sessionId, { type: 'revoke', byUserId: state.userId, reason: 'revoked_by_admin' });
        return;
      }
    },
  );
}

/** revoke-user-sessions: every session of the user, and every impersonation session they opened. */
export async function revokeUserSessions(
  ports: Pick<AdminPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly by: AdminAuthority; readonly userId: string },
): Promise<void> {
  const { by, userId } = command;
  await ports.commands.handle(
    { name: 'admin.revoke-user-sessions', request, actorId: by.userId, actorKind: 'admin', serialize: [streams.userSessions(userId)], settle: 'revocation' },
    async (unit) => {
      await decideOnTarget(unit, by, userId);
      await endAllSessions(unit, userId, 'revoked_by_admin');
    },
  );
}
