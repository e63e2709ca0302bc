import { DomainError } from '@portcullis/contracts';
import type { EmailVerificationClaims, RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { accountByEmailIn } from '../identity/account-model.ts';
import { decideAccount, decideSignInBan } from '../identity/account.decider.ts';
import { newSession } from '../session/new-session.ts';
import { openSession, type NewSession } from '../session/session-lifecycle.ts';

/** What following a verification link did: nothing (used again), verified, maybe signed in; or refused a banned user's session. */
export type VerifiedEmail = { readonly changed: false } | { readonly changed: true; readonly signIn: { readonly token: string; readonly session: NewSession } | null; readonly banned: boolean };

/**
 * verify-email with a plain verification link: the address it was sent to becomes verified, and with
 * `AUTH_EMAIL_VERIFICATION_AUTO_SIGN_IN` a session opens (`opensSession`; not for a banned user, whose
 * address is still verified, as in better-auth). A link used again is a success that changes nothing.
 */
export async function verifyEmail(
  ports: Pick<AccountPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly claims: EmailVerificationClaims; readonly opensSession: boolean },
): Promise<VerifiedEmail> {
  const { claims } = command;
  const email = claims.email.toLowerCase();
  const { result } = await ports.commands.handle({ name: 'verify-email', request, actorId: null }, async (unit): Promise<VerifiedEmail> => {
    const account = await accountByEmailIn(unit, email);
    if (!account) throw new DomainError('USER_NOT_FOUND');
    if (claims.userId !== undefined && claims.userId !== account.state.userId) throw new DomainError('INVALID_TOKEN');
    unit.actAs(account.state.userId);
    if (account.state.emailVerified) return { changed: false };
    unit.append(account.streamId, decideAccount({ type: 'verify-email', email }, account.state));
    if (!command.opensSession) return { changed: true, signIn: null, banned: false };
    const ban = decideSignInBan(account.state, unit.now);
    if (ban.outcome === 'banned') return { changed: true, signIn: null, banned: true };
    unit.append(account.streamId, ban.events);
    const signIn = newSession(ports, request, unit.now, true);
    openSession(unit, account.state.userId, signIn.session, 'email-verification');
    return { changed: true, signIn, banned: false };
  });
  return result;
}
