import { DomainError, streams } from '@portcullis/contracts';
import { loadStream, signEmailVerificationToken, type Loaded, type UnitOfWork } from '@portcullis/platform';
import type { IdentityPorts } from './ports.ts';
import { queueMail } from '../mail/mail-jobs.ts';
import { accountModel, decideAccount, decideEmailMove, type AccountState, type ActiveAccount } from './account.decider.ts';
import { emailReservationModel, type EmailReservationState } from '@portcullis/contracts';

export type LoadedAccount = Loaded<ActiveAccount>;

/** The user's account as a command decides on it. */
export function accountIn(unit: UnitOfWork, userId: string): Promise<Loaded<AccountState>> {
  return unit.load(streams.user(userId), accountModel);
}

/** The account, which must exist and not be deleted (USER_NOT_FOUND otherwise). */
export async function activeAccountIn(unit: UnitOfWork, userId: string): Promise<LoadedAccount> {
  const account = await accountIn(unit, userId);
  if (account.state.status !== 'active') throw new DomainError('USER_NOT_FOUND');
  return account as LoadedAccount;
}

export function emailReservationIn(unit: UnitOfWork, email: string): Promise<Loaded<EmailReservationState>> {
  return unit.load(streams.email(email), emailReservationModel);
}

/** The active account holding `email` (lower-cased), decided on the log itself: never behind a projection. */
export async function accountByEmailIn(unit: UnitOfWork, email: string): Promise<LoadedAccount | null> {
  const reservation = await emailReservationIn(unit, email);
  if (reservation.state.status !== 'reserved') return null;
  const account = await accountIn(unit, reservation.state.userId);
  return account.state.status === 'active' ? (account as LoadedAccount) : null;
}

/** The account as the log holds it now, for a read that decides nothing. */
export async function readAccount(ctx: Pick<IdentityPorts, 'store'>, userId: string): Promise<AccountState> {
  return (await loadStream(ctx.store, streams.user(userId), accountModel)).state;
}

/** The active account holding `email`, for a read that decides nothing. */
export async function readAccountByEmail(ctx: Pick<IdentityPorts, 'store'>, email: string): Promise<ActiveAccount | null> {
  const reservation = (await loadStream(ctx.store, streams.email(email), emailReservationModel)).state;
  if (reservation.status !== 'reserved') return null;
  const account = await readAccount(ctx, reservation.userId);
  return account.status === 'active' ? account : null;
}

/**
 * Moves an account to another address within a command: the user's change, the old reservation released,
 * the new one taken (COULDNT_UPDATE_YOUR_EMAIL when it is someone's), and, unless the new address counts as
 * verified, a verification mail to it.
 */
export async function moveEmail(
  unit: UnitOfWork,
  ctx: Pick<IdentityPorts, 'config'>,
  account: LoadedAccount,
  to: string,
  options: { readonly verified: boolean; readonly callbackURL: string | undefined },
): Promise<void> {
  const { userId, email: from, name } = account.state;
  const [fromReservation, toReservation] = await unit.loadAll([
    [streams.email(from), emailReservationModel],
    [streams.email(to), emailReservationModel],
  ]);
  const move = decideEmailMove({ userId, from, to }, fromReservation!.state, toReservation!.state);
  unit.append(account.streamId, decideAccount({ type: 'change-email', newEmail: to, verified: options.verified }, account.state));
  unit.append(fromReservation!.streamId, move.released);
  unit.append(toReservation!.streamId, move.reserved);
  if (!options.verified && ctx.config.emailVerification.enabled) {
    await queueVerificationMail(unit, ctx, { userId, email: to, name }, options.callbackURL);
  }
}

/** A verification mail for an address of the account (a JWT as better-auth signs it). */
export async function queueVerificationMail(
  unit: UnitOfWork,
  ctx: Pick<IdentityPorts, 'config'>,
  account: { readonly userId: string; readonly email: string; readonly name: string },
  callbackURL: string | undefined,
): Promise<void> {
  const expiresIn = ctx.config.emailVerification.expiresInSeconds;
  const token = await signEmailVerificationToken({ email: account.email, userId: account.userId }, ctx.config.secret, expiresIn, unit.now);
  queueMail(unit, ctx, {
    kind: 'verification',
    userId: account.userId,
    to: account.email,
    name: account.name,
    token,
    callbackURL: callbackURL ?? null,
    expiresAt: new Date(unit.now.getTime() + expiresIn * 1000),
  });
}

/**
 * Sign-in with AUTH_REQUIRE_EMAIL_VERIFICATION: an unverified email is refused, and (verification mail
 * being on) a fresh verification mail goes out, as better-auth's sendOnSignIn. Answers whether the sign-in
 * is refused; the mail is appended within the sign-in's command either way it is decided.
 */
export async function unverifiedEmailRefuses(
  unit: UnitOfWork,
  ctx: IdentityPorts,
  account: ActiveAccount,
  callbackURL: string | undefined,
): Promise<boolean> {
  if (!ctx.config.emailVerification.required || account.emailVerified) return false;
  if (ctx.config.emailVerification.enabled) await queueVerificationMail(unit, ctx, account, callbackURL);
  return true;
}
