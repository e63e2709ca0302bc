import { DomainError, streams } from '@portcullis/contracts';
import { hashToken, randomString, type RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { accountByEmailIn } from '../identity/account-model.ts';
import { queueMail } from '../mail/mail-jobs.ts';
import { decidePasswordResetLink, passwordResetModel } from './password-reset.decider.ts';
import { decideVerificationToken, initialVerificationToken, verificationTokenModel } from './verification-token.decider.ts';

/** Spec section 9: reset tokens are 24 random characters (better-auth's generateId(24), [a-zA-Z0-9]). */
const RESET_TOKEN_LENGTH = 24;

/**
 * request-password-reset (and forget-password): a link mailed to a known address, none to an unknown one
 * (the caller answers both alike, and as slowly). Only the latest link works: a newer one revokes the one
 * before in the same append, decided on the user's `password-reset-<userId>` stream.
 */
export async function requestPasswordReset(
  ports: Pick<AccountPorts, 'commands' | 'config' | 'log'>,
  request: RequestMetadata,
  command: { readonly email: string; readonly redirectTo: string | undefined },
): Promise<void> {
  if (!ports.config.resetPassword.enabled) throw new DomainError('RESET_PASSWORD_DISABLED');
  const token = randomString(RESET_TOKEN_LENGTH);
  const tokenHash = hashToken(token);
  await ports.commands.handle(
    // Nothing the api reads waits on the verification table: the links are decided on their streams.
    { name: 'request-password-reset', request, actorId: null, settle: 'none' },
    async (unit) => {
      const found = await accountByEmailIn(unit, command.email);
      if (!found) {
        ports.log.info({ requestId: request.requestId }, 'password reset requested for an unknown email');
        return;
      }
      const account = found.state;
      const resets = streams.passwordReset(account.userId);
      const expiresAt = new Date(unit.now.getTime() + ports.config.resetPassword.expiresInSeconds * 1000);
      const index = await unit.load(resets, passwordResetModel);
      const earlier = index.state.latest;
      if (earlier) {
        const earlierToken = await unit.load(streams.verification(earlier.tokenHash), verificationTokenModel);
        unit.append(earlierToken.streamId, decideVerificationToken({ type: 'revoke', reason: 'superseded' }, earlierToken.state));
      }
      unit.append(resets, decidePasswordResetLink({ userId: account.userId, tokenHash, expiresAt }, index.state));
      unit.append(
        streams.verification(tokenHash),
        decideVerificationToken({ type: 'issue', purpose: 'reset-password', tokenHash, userId: account.userId, expiresAt }, initialVerificationToken()),
        { expected: 'no_stream', model: verificationTokenModel },
      );
      queueMail(unit, ports, {
        kind: 'password-reset',
        userId: account.userId,
        to: account.email,
        name: account.name,
        token,
        callbackURL: command.redirectTo ?? null,
        expiresAt,
      });
    },
  );
}
