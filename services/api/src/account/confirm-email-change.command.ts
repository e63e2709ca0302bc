import { DomainError, streams } from '@portcullis/contracts';
import type { EmailVerificationClaims, RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { activeAccountIn, moveEmail } from '../identity/account-model.ts';

/**
 * verify-email with a change-of-email link. The confirmation mailed to the current address (and
 * better-auth's legacy link without a request type) moves the user to the new address at once, unverified,
 * and mails a verification link there; better-auth's second step (`change-email-verification`) moves it
 * keeping the verified flag. A link works once: after the move, its address is no longer the user's.
 */
export async function confirmEmailChange(
  ports: Pick<AccountPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly claims: EmailVerificationClaims; readonly signedInAs: string | null; readonly callbackURL: string | undefined },
): Promise<void> {
  const { claims } = command;
  const to = claims.updateTo!.toLowerCase();
  const from = claims.email.toLowerCase();
  if (!claims.userId) throw new DomainError('INVALID_TOKEN');
  const userId = claims.userId;
  await ports.commands.handle({ name: 'change-email.confirm', request, actorId: userId, serialize: [streams.user(userId)] }, async (unit) => {
    const account = await activeAccountIn(unit, userId);
    if (account.state.email !== from) throw new DomainError('INVALID_TOKEN');
    if (command.signedInAs !== null && command.signedInAs !== userId) throw new DomainError('UNAUTHORIZED');
    const keepsVerified = claims.requestType === 'change-email-verification' && account.state.emailVerified;
    // Someone taking the new address between the request and the click: COULDNT_UPDATE_YOUR_EMAIL.
    await moveEmail(unit, ports, account, to, { verified: keepsVerified, callbackURL: command.callbackURL });
  });
}
