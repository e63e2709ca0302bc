import { DomainError, type CachedSession } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { accountIn } from '../identity/account-model.ts';
import { decideSignInBan } from '../identity/account.decider.ts';
import { runSessionCommand } from '../session/session-change.command.ts';
import { newSession } from '../session/new-session.ts';
import { openImpersonationSession, type NewSession } from '../session/session-lifecycle.ts';
import type { AdminAuthority } from './access.decider.ts';
import { decideOnTarget } from './admin-guard.ts';

export interface OpenedImpersonation {
  readonly token: string;
  readonly session: NewSession;
  /** When it was opened, as the log holds it. */
  readonly at: string;
}

/**
 * impersonate-user: a session of the user for the admin, for `AUTH_ADMIN_IMPERSONATION_SESSION_DURATION`,
 * never remembered, in the user's session index and the admin's impersonation index. ADMIN_USER_IDS admins
 * alone impersonate admins (better-auth's `impersonate-admins`, which no role holds), and a banned user is
 * refused as better-auth's session-create hook refuses them (an expired ban is cleared on the way).
 */
export async function impersonateUser(
  ports: Pick<AdminPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly by: AdminAuthority; readonly userId: string },
): Promise<OpenedImpersonation> {
  const { by, userId } = command;
  const { result } = await ports.commands.handle(
    { name: 'admin.impersonate-user', request, actorId: by.userId, actorKind: 'admin' },
    async (unit) => {
      const account = await accountIn(unit, userId);
      if (account.state.status !== 'active') throw new DomainError('USER_NOT_FOUND');
      await decideOnTarget(unit, by, userId, 'YOU_CANNOT_IMPERSONATE_ADMINS');
      const ban = decideSignInBan(account.state, unit.now);
      if (ban.outcome === 'banned') throw new DomainError('BANNED_USER');
      unit.append(account.streamId, ban.events);
      const lifetimeMs = ports.config.admin.impersonationSessionDurationSeconds * 1000;
      const created = newSession(ports, request, unit.now, false);
      const session = { ...created.session, expiresAt: new Date(unit.now.getTime() + lifetimeMs) };
      openImpersonationSession(unit, userId, by.userId, session);
      return { token: created.token, session, at: unit.now.toISOString() };
    },
  );
  return result;
}

/**
 * stop-impersonating: the impersonation session ends (its actor the admin behind it, as for all it did there),
 * once the admin's own session, kept aside, is known to be live and theirs.
 */
export async function stopImpersonating(
  ports: Parameters<typeof runSessionCommand>[0] & Pick<AdminPorts, 'clock'>,
  request: RequestMetadata,
  command: { readonly impersonation: CachedSession['session']; readonly adminSession: CachedSession | null },
): Promise<void> {
  const { impersonation, adminSession } = command;
  const adminId = impersonation.impersonatedBy;
  if (!adminSession || adminSession.session.userId !== adminId || Date.parse(adminSession.session.expiresAt) <= ports.clock().getTime()) {
    throw new DomainError('FAILED_TO_FIND_ADMIN_SESSION');
  }
  await runSessionCommand(ports, request, impersonation.id, { type: 'revoke', byUserId: impersonation.userId, reason: 'impersonation_ended' }, {
    actorId: impersonation.userId,
    settle: 'revocation',
  });
}
