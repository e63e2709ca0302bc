import { DomainError, streams } from '@portcullis/contracts';
import { signEmailVerificationToken, type RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { activeAccountIn, emailReservationIn, moveEmail } from '../identity/account-model.ts';
import { queueMail } from '../mail/mail-jobs.ts';

/**
 * change-email (spec section 4): an unverified user's email changes at once (and a verification mail goes to
 * the new address); a verified user first confirms from the current address, with a link that moves the
 * email when followed (`confirmEmailChange`). Answers whether the email moved now.
 */
export async function changeEmail(
  ports: Pick<AccountPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly userId: string; readonly newEmail: string; readonly callbackURL: string | undefined },
): Promise<boolean> {
  const { userId, newEmail: to, callbackURL } = command;
  const { result } = await ports.commands.handle({ name: 'change-email', request, actorId: userId, serialize: [streams.user(userId)] }, async (unit) => {
    const account = await activeAccountIn(unit, userId);
    if (!account.state.emailVerified) {
      await moveEmail(unit, ports, account, to, { verified: false, callbackURL });
      return true;
    }
    if (!ports.config.emailVerification.enabled) throw new DomainError('VERIFICATION_EMAIL_NOT_ENABLED');
    if ((await emailReservationIn(unit, to)).state.status === 'reserved') throw new DomainError('COULDNT_UPDATE_YOUR_EMAIL');
    const expiresIn = ports.config.emailVerification.expiresInSeconds;
    const token = await signEmailVerificationToken(
      { email: account.state.email, updateTo: to, requestType: 'change-email-confirmation', userId },
      ports.config.secret,
      expiresIn,
      unit.now,
    );
    queueMail(unit, ports, {
      kind: 'change-email',
      userId,
      to: account.state.email,
      name: account.state.name,
      token,
      callbackURL: callbackURL ?? null,
      expiresAt: new Date(unit.now.getTime() + expiresIn * 1000),
      newEmail: to,
    });
    return false;
  });
  return result;
}
