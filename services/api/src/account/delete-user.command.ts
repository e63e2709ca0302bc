import { DomainError, streams } from '@portcullis/contracts';
import { hashToken, type RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { activeAccountIn } from '../identity/account-model.ts';
import { credentialOf } from '../identity/account.decider.ts';
import { passwordCheck } from '../identity/password-policy.ts';
import { deleteUserIn } from '../identity/user-deletion.ts';
import { decideVerificationToken, verificationTokenModel } from './verification-token.decider.ts';

/** What authorises a deletion besides the session: the password, or the mailed link's token (or both). */
export interface DeletionAuthority {
  readonly password?: string | undefined;
  readonly token?: string | undefined;
}

/**
 * delete-user: the user deleted (`deleteUserIn`: every session ended, the addresses freed, the personal data
 * erased), after the password is checked against the stored hash, and consuming the mailed token when one
 * authorised it, so a link works once.
 */
export async function deleteUser(
  ports: Pick<AccountPorts, 'commands' | 'identity' | 'config'>,
  request: RequestMetadata,
  command: { readonly userId: string; readonly authority: DeletionAuthority },
): Promise<void> {
  const { userId, authority } = command;
  const password = authority.password === undefined ? null : passwordCheck(authority.password, ports.config.password.argon2);
  await ports.commands.handle({ name: 'delete-user', request, actorId: userId, serialize: [streams.user(userId)], settle: 'revocation' }, async (unit) => {
    if (authority.token !== undefined) {
      const tokenStream = await unit.load(streams.verification(hashToken(authority.token)), verificationTokenModel);
      unit.append(tokenStream.streamId, decideVerificationToken({ type: 'consume', purpose: 'delete-account', now: unit.now, userId }, tokenStream.state));
    }
    const account = await activeAccountIn(unit, userId);
    if (password) {
      const credential = credentialOf(account.state);
      if (!credential) throw new DomainError('CREDENTIAL_ACCOUNT_NOT_FOUND');
      if (!(await password.matches(credential.passwordHash))) throw new DomainError('INVALID_PASSWORD');
    }
    await deleteUserIn(unit, ports, account);
  });
}
