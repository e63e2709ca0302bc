import { DomainError, streams } from '@portcullis/contracts';
import { generateId, hashPassword, type RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { activeAccountIn, readAccount } from '../identity/account-model.ts';
import { credentialOf, decideAccount } from '../identity/account.decider.ts';

/**
 * set-password (a server call): a first password for a user who has none (one from a social provider, or
 * imported). Refused for a user who has one, before any hashing. The length is the caller's check.
 */
export async function setPassword(
  ports: Pick<AccountPorts, 'commands' | 'store' | 'config'>,
  request: RequestMetadata,
  command: { readonly userId: string; readonly newPassword: string },
): Promise<void> {
  const { userId } = command;
  const before = await readAccount(ports, userId);
  if (before.status !== 'active') throw new DomainError('USER_NOT_FOUND');
  if (credentialOf(before)) throw new DomainError('PASSWORD_ALREADY_SET');
  const passwordHash = await hashPassword(command.newPassword, ports.config.password.argon2);
  await ports.commands.handle({ name: 'set-password', request, actorId: null, serialize: [streams.user(userId)] }, async (unit) => {
    const account = await activeAccountIn(unit, userId);
    unit.append(account.streamId, decideAccount({ type: 'set-password', passwordHash, newAccountId: generateId() }, account.state));
  });
}
