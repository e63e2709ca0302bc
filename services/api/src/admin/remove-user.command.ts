import { DomainError, streams } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { activeAccountIn } from '../identity/account-model.ts';
import { deleteUserIn } from '../identity/user-deletion.ts';
import type { AdminAuthority } from './access.decider.ts';
import { decideOnTarget } from './admin-guard.ts';

/** remove-user: the user deleted as their own delete-user deletes them (`deleteUserIn`), under the rule for admins acting on admins. */
export async function removeUser(ports: Pick<AdminPorts, 'commands' | 'identity'>, request: RequestMetadata, command: { readonly by: AdminAuthority; readonly userId: string }): Promise<void> {
  const { by, userId } = command;
  if (userId === by.userId) throw new DomainError('YOU_CANNOT_REMOVE_YOURSELF');
  await ports.commands.handle(
    { name: 'admin.remove-user', request, actorId: by.userId, actorKind: 'admin', serialize: [streams.user(userId)], settle: 'revocation' },
    async (unit) => {
      const account = await activeAccountIn(unit, userId);
      await decideOnTarget(unit, by, userId);
      await deleteUserIn(unit, ports, account);
    },
  );
}
