import { EmailVerified, evolveUserAnswer, ProviderTokensUpdated, streams, type DomainEvent, type ErrorCode, type User } from '@portcullis/contracts';
import { generateId, type RequestMetadata, type UnitOfWork } from '@portcullis/platform';
import type { SocialPorts } from './ports.ts';
import { emailReservationIn } from '../identity/account-model.ts';
import type { ActiveAccount } from '../identity/account.decider.ts';
import { normalizeEmail } from '../identity/password-policy.ts';
import { linkProviderAccountIn, type NewProviderAccount } from '../identity/provider-accounts.ts';
import { providerAccountClaimModel } from '../identity/provider-account.decider.ts';
import { registerUserIn } from '../identity/register-user.command.ts';
import { countSignUp } from '../identity/sign-up-count.ts';
import { passSignInGates } from '../identity/sign-in-gates.ts';
import { signInAccountModel } from '../identity/sign-in-account.state.ts';
import { newSession } from '../session/new-session.ts';
import { openSession } from '../session/session-lifecycle.ts';
import type { ProviderProfile } from './provider.ts';

/**
 * Why a provider's sign-in opened no session: better-auth's callback codes (spaces for underscores in its
 * `result.error`), each an `?error=` on the flow's error URL, or a catalogue error for the id-token branch.
 */
export type SocialRefusal =
  | 'account_not_linked'
  | 'signup_disabled'
  | 'unable_to_link_account'
  | 'email_not_verified'
  | 'banned'
  | 'email_does_not_match'
  | 'account_already_linked_to_different_user';

export const refusalErrors: Readonly<Record<SocialRefusal, ErrorCode>> = {
  account_not_linked: 'ACCOUNT_NOT_LINKED',
  signup_disabled: 'SIGNUP_DISABLED',
  unable_to_link_account: 'UNABLE_TO_LINK_ACCOUNT',
  email_not_verified: 'EMAIL_NOT_VERIFIED',
  banned: 'BANNED_USER',
  email_does_not_match: 'EMAIL_DOES_NOT_MATCH',
  account_already_linked_to_different_user: 'ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER',
};

/**
 * Whether a provider's sign-in may not create a user: never (AUTH_DISABLE_SIGN_UP, or the provider in
 * AUTH_SOCIAL_DISABLE_SIGN_UP), or, for a provider in AUTH_DISABLE_IMPLICIT_SIGN_UP, unless the sign-in asked
 * to (`requestSignUp`), as better-auth decides it.
 */
export function signUpRefused(config: SocialPorts['config'], providerId: string, requestSignUp: boolean): boolean {
  const { social } = config;
  return config.disableSignUp || social.disableSignUp.includes(providerId) || (social.disableImplicitSignUp.includes(providerId) && !requestSignUp);
}

export interface ProviderSignIn {
  readonly method: 'social' | 'id-token';
  readonly profile: ProviderProfile & { readonly email: string };
  readonly account: NewProviderAccount;
  /** Refuses new users (AUTH_DISABLE_SIGN_UP). */
  readonly disableSignUp: boolean;
  /** Where the verification mail sent on an unverified refusal leads. */
  readonly callbackURL: string | undefined;
}

export type ProviderSignInOutcome =
  | { readonly signedIn: true; readonly token: string; readonly user: User; readonly isRegister: boolean }
  | { readonly signedIn: false; readonly refusal: SocialRefusal };

/**
 * A sign-in with a provider's account, one command (better-auth's handleOAuthUserInfo): the account's owner
 * signs in (with the provider's fresh tokens); else the user holding its email gets it linked, only where the
 * provider vouches for the email (it says it is verified, or is listed in
 * AUTH_ACCOUNT_LINKING_TRUSTED_PROVIDERS) and the local email is verified too, so nobody takes over an
 * account whose address they never proved; else a new user, verified as the provider says. Whoever signs
 * in passes the gates every sign-in passes. The provider account's claim, the user's events and the
 * session are one append: a race for the same provider account or email is decided again on what won.
 */
export async function signInWithProvider(ctx: SocialPorts, request: RequestMetadata, signIn: ProviderSignIn): Promise<ProviderSignInOutcome> {
  const { account } = signIn;
  const email = normalizeEmail(signIn.profile.email);
  const { result } = await ctx.commands.handle(
    { name: `sign-in.${signIn.method}`, request, actorId: null, serialize: [streams.providerAccount(account.providerId, account.providerAccountId), streams.email(email)] },
    async (unit): Promise<ProviderSignInOutcome> => {
      const claim = await unit.load(streams.providerAccount(account.providerId, account.providerAccountId), providerAccountClaimModel);
      if (claim.state.status === 'claimed') return returningSignIn(ctx, unit, request, signIn, claim.state.userId, claim.state.accountId);
      const reservation = await emailReservationIn(unit, email);
      if (reservation.state.status === 'reserved') return linkingSignIn(ctx, unit, request, signIn, reservation.state.userId);
      if (signIn.disableSignUp) return { signedIn: false, refusal: 'signup_disabled' };
      const userId = generateId();
      unit.actAs(userId);
      const verified = signIn.profile.emailVerified;
      const refusedUnverified = ctx.config.emailVerification.required && !verified;
      const registered = await registerUserIn(unit, ctx, request, {
        registration: { userId, email, name: signIn.profile.name, image: signIn.profile.image, emailVerified: verified, passwordHash: null, refusal: 'USER_ALREADY_EXISTS' },
        username: { username: null, displayUsername: null },
        alsoOnUser: () => [],
        providerAccount: account,
        verificationMail: !verified && ctx.config.emailVerification.enabled && (ctx.config.emailVerification.sendOnSignUp || refusedUnverified) ? { callbackURL: signIn.callbackURL } : null,
        session: refusedUnverified ? null : { rememberMe: true, method: signIn.method, providerId: account.providerId },
        whenTaken: 'refuse',
      });
      if (!registered.registered || !registered.signIn) return { signedIn: false, refusal: 'email_not_verified' };
      return { signedIn: true, token: registered.signIn.token, user: registered.user, isRegister: true };
    },
  );
  if (result.signedIn && result.isRegister) countSignUp('social');
  return result;
}

async function returningSignIn(
  ctx: SocialPorts,
  unit: UnitOfWork,
  request: RequestMetadata,
  signIn: ProviderSignIn,
  userId: string,
  accountId: string,
): Promise<ProviderSignInOutcome> {
  unit.actAs(userId);
  const found = await unit.load(streams.user(userId), signInAccountModel);
  const { account, user } = found.state;
  if (account.status !== 'active' || !user) return { signedIn: false, refusal: 'unable_to_link_account' };
  // Fresh tokens on every sign-in; the scopes stay as granted (better-auth changes them only on a link).
  const events: DomainEvent[] = [ProviderTokensUpdated({ userId, accountId, providerId: signIn.account.providerId, ...signIn.account.tokens })];
  events.push(...providerVouchesForEmail(account, signIn));
  return openProviderSession(ctx, unit, request, signIn, { streamId: found.streamId, account, user, passwordChange: found.state.passwordChange }, events, false);
}

async function linkingSignIn(ctx: SocialPorts, unit: UnitOfWork, request: RequestMetadata, signIn: ProviderSignIn, userId: string): Promise<ProviderSignInOutcome> {
  const found = await unit.load(streams.user(userId), signInAccountModel);
  const { account, user } = found.state;
  if (account.status !== 'active' || !user) return { signedIn: false, refusal: 'unable_to_link_account' };
  const trusted = ctx.config.social.trustedProviders.includes(signIn.account.providerId);
  if ((!trusted && !signIn.profile.emailVerified) || !account.emailVerified) return { signedIn: false, refusal: 'account_not_linked' };
  const link = await linkProviderAccountIn(unit, userId, signIn.account);
  if (link.outcome !== 'linked') return { signedIn: false, refusal: 'unable_to_link_account' };
  unit.actAs(userId);
  return openProviderSession(ctx, unit, request, signIn, { streamId: found.streamId, account, user, passwordChange: found.state.passwordChange }, link.userEvents, false);
}

/** The provider's verified word for the very address the user holds unverified proves it (as better-auth). */
function providerVouchesForEmail(account: ActiveAccount, signIn: ProviderSignIn): DomainEvent[] {
  const sameAddress = normalizeEmail(signIn.profile.email) === account.email;
  return signIn.profile.emailVerified && !account.emailVerified && sameAddress ? [EmailVerified({ userId: account.userId, email: account.email })] : [];
}

async function openProviderSession(
  ctx: SocialPorts,
  unit: UnitOfWork,
  request: RequestMetadata,
  signIn: ProviderSignIn,
  candidate: { streamId: string; account: ActiveAccount; user: User; passwordChange: Parameters<typeof passSignInGates>[2]['passwordChange'] },
  userEvents: DomainEvent[],
  isRegister: boolean,
): Promise<ProviderSignInOutcome> {
  const verifies = userEvents.some((event) => event.type === 'user.email_verified.v1');
  const account = verifies ? { ...candidate.account, emailVerified: true } : candidate.account;
  unit.append(candidate.streamId, userEvents);
  const gates = await passSignInGates(unit, ctx, { ...candidate, account }, { lock: 'check', callbackURL: signIn.callbackURL, unverified: 'EMAIL_NOT_VERIFIED' });
  if (!gates.passed) return { signedIn: false, refusal: gates.refusal === 'BANNED_USER' ? 'banned' : 'email_not_verified' };
  const at = unit.now.toISOString();
  const user = [...userEvents, ...gates.userEvents].reduce<User | null>((u, event) => evolveUserAnswer(u, event, at), candidate.user) ?? candidate.user;
  const opened = newSession(ctx, request, unit.now, true);
  openSession(unit, account.userId, opened.session, signIn.method, signIn.account.providerId);
  return { signedIn: true, token: opened.token, user, isRegister };
}
