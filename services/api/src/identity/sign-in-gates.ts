import { DomainError, streams, type DomainEvent, type ErrorCode } from '@portcullis/contracts';
import type { UnitOfWork } from '@portcullis/platform';
import type { IdentityPorts } from './ports.ts';
import { unverifiedEmailRefuses } from './account-model.ts';
import { decideSignInBan, type ActiveAccount } from './account.decider.ts';
import { decideSignInGuard, signInGuardModel } from './sign-in-guard.decider.ts';
import type { PasswordChange } from './sign-in-guard.decider.ts';

/** A user about to get a session, within the sign-in's command. */
export interface SignInCandidate {
  /** The user's stream, where an expired ban is recorded as lifted. */
  readonly streamId: string;
  readonly account: ActiveAccount;
  readonly passwordChange: PasswordChange | null;
}

export interface GateOptions {
  /**
   * `checked`: the caller decided the account's lock already (a password sign-in, before it spent a hash on
   * the password); `check`: decide it here (a provider's or an id token's sign-in, which no failure counts).
   */
  readonly lock: 'checked' | 'check';
  /** Where the verification mail sent on an unverified refusal leads. */
  readonly callbackURL: string | undefined;
  /** The answer for an unverified email (the username plugin has its own). */
  readonly unverified: ErrorCode;
}

/**
 * Refused with the answer to give; or passed, with the account as it signs in and what the gates appended
 * on the user's stream (an expired ban lifted), for the answer's user.
 */
export type GateOutcome =
  | { readonly passed: true; readonly account: ActiveAccount; readonly userEvents: readonly DomainEvent[] }
  | { readonly passed: false; readonly refusal: ErrorCode };

/**
 * The gates every way of signing in passes, in one place, in better-auth's order: the account's brute-force
 * lock, the admin plugin's ban, and (with AUTH_REQUIRE_EMAIL_VERIFICATION) a verified email, a fresh
 * verification mail going out on refusal. Rate limits and captcha are the perimeter's, before any of this.
 * A refusal is an answer the command still appends for (the mail, the lifted lock), not a thrown error.
 */
export async function passSignInGates(unit: UnitOfWork, ctx: IdentityPorts, candidate: SignInCandidate, options: GateOptions): Promise<GateOutcome> {
  const { account } = candidate;
  if (options.lock === 'check') {
    const guard = await unit.load(streams.accountSignIn(account.userId), signInGuardModel, { check: 'if-kept' });
    const decision = decideSignInGuard(
      { type: 'check', scope: 'account', identifier: account.email, userId: account.userId, passwordChange: candidate.passwordChange, now: unit.now, policy: ctx.config.bruteForce },
      guard.state,
    );
    if (decision.outcome === 'locked') throw new DomainError('TOO_MANY_FAILED_SIGN_INS', { retryAfterSeconds: decision.retryAfterSeconds });
    unit.append(guard.streamId, decision.events);
  }
  const ban = decideSignInBan(account, unit.now);
  if (ban.outcome === 'banned') return { passed: false, refusal: 'BANNED_USER' };
  unit.append(candidate.streamId, ban.events);
  const signingIn = { ...account, ban: null };
  if (await unverifiedEmailRefuses(unit, ctx, signingIn, options.callbackURL)) return { passed: false, refusal: options.unverified };
  return { passed: true, account: signingIn, userEvents: ban.events };
}
