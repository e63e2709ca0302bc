import { streams } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { activeAccountIn } from '../identity/account-model.ts';
import { decideAccount } from '../identity/account.decider.ts';
import { releaseProviderAccounts } from '../identity/provider-accounts.ts';

/**
 * unlink-account: the account the body names (see the decider) leaves the user, never the last one, and its provider account is free for another user in the same append. The
 * session's freshness is the caller's check.
 */
export async function unlinkAccount(
  ports: Pick<AccountPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly userId: string; readonly providerId: string | undefined; readonly accountId: string | undefined },
): Promise<void> {
  const { userId } = command;
  await ports.commands.handle({ name: 'unlink-account', request, actorId: userId, serialize: [streams.user(userId)] }, async (unit) => {
    const account = await activeAccountIn(unit, userId);
    const unlinked = decideAccount({ type: 'unlink', providerId: command.providerId, accountId: command.accountId }, account.state);
    unit.append(account.streamId, unlinked);
    const gone = new Set(unlinked.flatMap((event) => (event.type === 'user.account_unlinked.v1' ? [event.data.accountId] : [])));
    await releaseProviderAccounts(unit, userId, account.state.accounts.filter((held) => gone.has(held.accountId)));
  });
}
