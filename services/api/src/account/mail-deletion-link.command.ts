import { DomainError, streams } from '@portcullis/contracts';
import { hashToken, randomString, type RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { activeAccountIn } from '../identity/account-model.ts';
import { credentialOf } from '../identity/account.decider.ts';
import { passwordCheck } from '../identity/password-policy.ts';
import { queueMail } from '../mail/mail-jobs.ts';
import { decideVerificationToken } from './verification-token.decider.ts';

/** Spec section 9: 32 characters of lowercase letters and digits (better-auth's generateRandomString(32, '0-9', 'a-z')). */
const DELETE_TOKEN_LENGTH = 32;
const DELETE_TOKEN_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * delete-user with `AUTH_DELETE_USER_VERIFICATION`: a link mailed to the user (a token of 32 characters, for
 * `AUTH_DELETE_USER_EXPIRES_IN`), after the password is checked if one was given; the link deletes.
 */
export async function mailDeletionLink(
  ports: Pick<AccountPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly userId: string; readonly password: string | undefined; readonly callbackURL: string | undefined },
): Promise<void> {
  const { userId } = command;
  const token = randomString(DELETE_TOKEN_LENGTH, DELETE_TOKEN_ALPHABET);
  const tokenHash = hashToken(token);
  const check = command.password ? passwordCheck(command.password, ports.config.password.argon2) : null;
  await ports.commands.handle({ name: 'delete-user.mail', request, actorId: userId }, async (unit) => {
    const account = await activeAccountIn(unit, userId);
    if (check) {
      const credential = credentialOf(account.state);
      if (!credential) throw new DomainError('CREDENTIAL_ACCOUNT_NOT_FOUND');
      if (!(await check.matches(credential.passwordHash))) throw new DomainError('INVALID_PASSWORD');
    }
    const expiresAt = new Date(unit.now.getTime() + ports.config.deleteUser.expiresInSeconds * 1000);
    unit.append(
      streams.verification(tokenHash),
      decideVerificationToken({ type: 'issue', purpose: 'delete-account', tokenHash, userId, expiresAt }, { status: 'none' }),
      { expected: 'no_stream' },
    );
    const { email, name } = account.state;
    queueMail(unit, ports, { kind: 'delete-account', userId, to: email, name, token, callbackURL: command.callbackURL ?? null, expiresAt });
  });
}
