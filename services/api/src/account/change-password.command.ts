import { DomainError, streams } from '@portcullis/contracts';
import { hashPassword, type RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { accountIn } from '../identity/account-model.ts';
import { credentialOf, decideAccount } from '../identity/account.decider.ts';
import { passwordCheck } from '../identity/password-policy.ts';
import { newSession } from '../session/new-session.ts';
import { endAllSessions, openSession, type NewSession } from '../session/session-lifecycle.ts';

/**
 * change-password: the current password checked against the hash this change replaces (not one read
 * before), the new one set; with `revokeOtherSessions`, every session ends, the caller's too, and a new one
 * opens for the caller, as better-auth does (answered here). The lengths are the caller's checks.
 */
export async function changePassword(
  ports: Pick<AccountPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly userId: string; readonly currentPassword: string; readonly newPassword: string; readonly revokeOtherSessions: boolean },
): Promise<{ readonly token: string; readonly session: NewSession } | null> {
  const { userId } = command;
  const currentPassword = passwordCheck(command.currentPassword, ports.config.password.argon2);
  // Hashed while the current password is verified: both argon2 runs at once, on two of the lanes.
  const hashing = hashPassword(command.newPassword, ports.config.password.argon2);
  hashing.catch(() => {});
  const { result } = await ports.commands.handle(
    { name: 'change-password', request, actorId: userId, serialize: [streams.user(userId)], settle: command.revokeOtherSessions ? 'revocation' : 'write' },
    async (unit) => {
      const account = await accountIn(unit, userId);
      const credential = account.state.status === 'active' ? credentialOf(account.state) : null;
      if (!credential) throw new DomainError('CREDENTIAL_ACCOUNT_NOT_FOUND');
      if (!(await currentPassword.matches(credential.passwordHash))) throw new DomainError('INVALID_PASSWORD');
      const passwordHash = await hashing;
      unit.append(account.streamId, decideAccount({ type: 'change-password', passwordHash }, account.state));
      if (!command.revokeOtherSessions) return null;
      await endAllSessions(unit, userId, 'password_changed');
      const signIn = newSession(ports, request, unit.now, true);
      openSession(unit, userId, signIn.session, 'email-password');
      return signIn;
    },
  );
  return result;
}
