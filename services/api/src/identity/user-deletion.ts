import type { UnitOfWork } from '@portcullis/platform';
import type { IdentityPorts } from './ports.ts';
import { endAllSessions } from '../session/session-lifecycle.ts';
import { emailReservationIn, type LoadedAccount } from './account-model.ts';
import { decideAccount, decideEmailRelease } from './account.decider.ts';
import { releaseProviderAccounts } from './provider-accounts.ts';
import { releaseUsernameOf } from './username-claim.ts';

/**
 * Deletes a user within a command, in its one atomic append: `user.deleted.v1` on its stream (every
 * projection drops its sessions, accounts and verifications on it), its email and username released for
 * new sign-ups, its provider accounts for new links, every session ended, and what other areas add (memberships removed from their
 * organizations). The user's own deletion and an admin's removal both end here.
 */
export async function deleteUserIn(unit: UnitOfWork, ctx: Pick<IdentityPorts, 'identity'>, account: LoadedAccount): Promise<void> {
  const { userId, email } = account.state;
  unit.append(account.streamId, decideAccount({ type: 'delete' }, account.state));
  const reservation = await emailReservationIn(unit, email);
  unit.append(reservation.streamId, decideEmailRelease({ userId, email }, reservation.state));
  // Every session, decided on the user's session index, so none opened a moment ago outlives the user.
  await endAllSessions(unit, userId, 'user_deleted');
  await releaseUsernameOf(unit, userId);
  await releaseProviderAccounts(unit, userId, account.state.accounts);
  for (const step of ctx.identity.userDeletion) await step(unit, userId);
}
