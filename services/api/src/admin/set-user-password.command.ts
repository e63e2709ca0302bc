import { streams } from '@portcullis/contracts';
import { generateId, hashPassword, type RequestMetadata } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { accountIn } from '../identity/account-model.ts';
import { decideAccount } from '../identity/account.decider.ts';
import { endImpersonationsOpenedBy } from '../session/session-lifecycle.ts';
import type { AdminAuthority } from './access.decider.ts';
import { decideOnTarget } from './admin-guard.ts';

/**
 * set-user-password: a reset by someone else, which also lifts a sign-in lock and creates the password
 * account if there is none. The impersonation sessions the user opened end with it: whoever knew the old
 * password could have opened them. The new password's length is the caller's check.
 */
export async function setUserPassword(
  ports: Pick<AdminPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly by: AdminAuthority; readonly userId: string; readonly newPassword: string },
): Promise<void> {
  const { by, userId } = command;
  const passwordHash = await hashPassword(command.newPassword, ports.config.password.argon2);
  await ports.commands.handle(
    { name: 'admin.set-user-password', request, actorId: by.userId, actorKind: 'admin', serialize: [streams.user(userId)], settle: 'revocation' },
    async (unit) => {
      const account = await accountIn(unit, userId);
      await decideOnTarget(unit, by, userId);
      unit.append(account.streamId, decideAccount({ type: 'reset-password', passwordHash, newAccountId: generateId() }, account.state));
      await endImpersonationsOpenedBy(unit, userId, 'password_reset');
    },
  );
}
