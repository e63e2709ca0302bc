import { DomainError, streams } from '@portcullis/contracts';
import { generateId, hashPassword, hashToken, type RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { accountIn } from '../identity/account-model.ts';
import { decideAccount } from '../identity/account.decider.ts';
import { endAllSessions, endImpersonationsOpenedBy } from '../session/session-lifecycle.ts';
import { decideVerificationToken, verificationTokenModel } from './verification-token.decider.ts';

/**
 * reset-password: the mailed token, used once (its stream's version makes racing resets happen once), sets
 * the new password; every session of the user ends with it when `AUTH_RESET_PASSWORD_REVOKE_SESSIONS` says
 * so, and the impersonation sessions they opened (if an admin) always: whoever knew the old password could
 * have opened them. The new password's length is the caller's check.
 */
export async function resetPassword(
  ports: Pick<AccountPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly token: string; readonly newPassword: string },
): Promise<void> {
  const tokenHash = hashToken(command.token);
  const passwordHash = await hashPassword(command.newPassword, ports.config.password.argon2);
  const revokeSessions = ports.config.resetPassword.revokeSessions;
  await ports.commands.handle({ name: 'reset-password', request, actorId: null, settle: 'revocation' }, async (unit) => {
    const tokenStream = await unit.load(streams.verification(tokenHash), verificationTokenModel);
    const consumed = decideVerificationToken({ type: 'consume', purpose: 'reset-password', now: unit.now }, tokenStream.state);
    const consumption = consumed[0];
    if (consumption?.type !== 'verification.token_consumed.v1') throw new DomainError('INVALID_TOKEN');
    const userId = consumption.data.userId;
    unit.actAs(userId);
    unit.append(tokenStream.streamId, consumed);
    const account = await accountIn(unit, userId);
    unit.append(account.streamId, decideAccount({ type: 'reset-password', passwordHash, newAccountId: generateId() }, account.state));
    if (revokeSessions) await endAllSessions(unit, userId, 'password_reset');
    else await endImpersonationsOpenedBy(unit, userId, 'password_reset');
  });
}
