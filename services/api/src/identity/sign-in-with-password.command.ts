import {
  AccountSignInFailed,
  DomainError,
  evolveUserAnswer,
  streams,
  type DomainEvent,
  type ErrorCode,
  type StreamModel,
  type User,
} from '@portcullis/contracts';
import { isBetterAuthScryptHash, type RequestMetadata, type UnitOfWork } from '@portcullis/platform';
import type { IdentityPorts } from './ports.ts';
import { redirectLocation } from '../http/redirect.ts';
import type { OpenedSignIn } from '../http/sign-in-answer.ts';
import { newSession } from '../session/new-session.ts';
import { openSession } from '../session/session-lifecycle.ts';
import { credentialOf, decideAccount, type ActiveAccount } from './account.decider.ts';
import { passSignInGates } from './sign-in-gates.ts';
import { passwordCheck, type PasswordCheck } from './password-policy.ts';
import { decideSignInGuard, signInGuardModel, type SignInAttempt, type SignInGuardState } from './sign-in-guard.decider.ts';
import { signInAccountModel, type SignInAccount } from './sign-in-account.state.ts';

type SignInFailureReason = 'user_not_found' | 'credential_account_not_found' | 'invalid_password';

/** An email's or a username's reservation stream, folded: held by a user, or free. */
type ReservationState = { status: 'free' } | { status: 'reserved'; userId: string };

/** One way of naming an account at sign-in: an email or a username, with its own sign-in stream. */
export interface SignInIdentity {
  /** Lower-cased. */
  readonly identifier: string;
  /** `sign-in-<email>` or `sign-in-username-<username>`: failures and locks for this identifier. */
  readonly guardStream: string;
  /** The stream that reserves the identifier for an account. */
  readonly reservationStream: string;
  readonly reservationModel: StreamModel<ReservationState>;
  /** The failed-sign-in event for this kind of identifier (never with the attempted password). */
  readonly failure: (reason: SignInFailureReason, userId: string | null) => DomainEvent;
  /** What the account's own failures say it was reached by. */
  readonly via: 'email' | 'username';
  /** The one answer for an unknown identifier, a missing password account and a wrong password alike. */
  readonly refusal: ErrorCode;
  /** The answer for a right password on an unverified email, where verification is required. */
  readonly unverified: ErrorCode;
}

/** A password sign-in that passed every check, within the command that opens its session. */
export interface VerifiedSignIn {
  readonly unit: UnitOfWork;
  readonly request: RequestMetadata;
  readonly account: ActiveAccount;
  readonly user: User;
}

/** What a sign-in's command ends in: a session's answer, or a refusal answered once its record is on the log. */
export type SignInOutcome<T> = { readonly answer: T } | { readonly refusal: ErrorCode };

/** At most this many fresh reads for one sign-in, when its streams keep changing between read and append. */
const SIGN_IN_ATTEMPTS = 5;

/**
 * The password sign-in shared by email and username, one command: the identifier's reservation, its user
 * and the sign-in streams (the identifier's and the account's) are decided on; `open` gets a verified
 * sign-in and appends its session in the same append. A lock refuses with 429 before any work is spent on
 * the password; every failure is answered alike (a decoy hash for unknown accounts, so the time taken does
 * not tell either), recorded on the identifier's sign-in stream and the account's, and locks either once its
 * failures within the window reach the limit.
 *
 * The states an earlier sign-in kept are decided on without reading (a busy account signs in on no read at
 * all); the append then requires every stream at the version kept, so a change since (a password changed,
 * the address moved, a lock set through another process) fails it and the sign-in is decided again on what
 * the log holds, the password verified again only if its hash changed. Read afresh, the sign-in streams are
 * not required unchanged: failures others record during the password check do not undo a correct password.
 */
export async function signInWithPassword<T>(
  ctx: IdentityPorts,
  request: RequestMetadata,
  identity: SignInIdentity,
  password: string,
  callbackURL: string | undefined,
  open: (signIn: VerifiedSignIn) => SignInOutcome<T>,
): Promise<T> {
  const check = passwordCheck(password, ctx.config.password.argon2);
  const command = (storm: boolean) =>
    ctx.commands.handle({ name: `sign-in.${identity.via}`, request, actorId: null, attempts: SIGN_IN_ATTEMPTS }, (unit) =>
      decidePasswordSignIn(ctx, unit, request, identity, check, storm, callbackURL, open),
    );
  const { result } = await command(false).catch((error: unknown) => {
    if (!(error instanceof DomainError && error.code === 'CONFLICT')) throw error;
    // A storm of attempts kept moving the sign-in streams: decide once more recording failures whatever
    // their version. A lock is then decided on the next failure, which counts these; the answer is the same.
    return command(true);
  });
  if ('refusal' in result) throw new DomainError(result.refusal);
  return result.answer;
}

async function decidePasswordSignIn<T>(
  ctx: IdentityPorts,
  unit: UnitOfWork,
  request: RequestMetadata,
  identity: SignInIdentity,
  password: PasswordCheck,
  storm: boolean,
  callbackURL: string | undefined,
  open: (signIn: VerifiedSignIn) => SignInOutcome<T>,
): Promise<SignInOutcome<T>> {
  const [guard, reservation] = await unit.loadAll<unknown>([
    [identity.guardStream, signInGuardModel, { check: 'if-kept' }],
    [identity.reservationStream, identity.reservationModel],
  ]);
  const reserved = reservation!.state as ReservationState;
  const userId = reserved.status === 'reserved' ? reserved.userId : null;
  const [found, accountGuard] =
    userId === null
      ? [null, null]
      : await unit.loadAll<unknown>([
          [streams.user(userId), signInAccountModel],
          [streams.accountSignIn(userId), signInGuardModel, { check: 'if-kept' }],
        ]);
  const signInAccount = found?.state as SignInAccount | undefined;
  const attempt: Omit<SignInAttempt, 'scope'> = {
    identifier: identity.identifier,
    userId,
    passwordChange: signInAccount?.passwordChange ?? null,
    now: unit.now,
    policy: ctx.config.bruteForce,
  };

  // The identifier's guard, and the account's when the identifier names one: either lock refuses.
  const guards = [
    { scope: 'identifier' as const, streamId: identity.guardStream, state: guard!.state as SignInGuardState },
    ...(userId !== null && accountGuard ? [{ scope: 'account' as const, streamId: accountGuard.streamId, state: accountGuard.state as SignInGuardState }] : []),
  ];
  for (const { scope, streamId, state } of guards) {
    const decision = decideSignInGuard({ type: 'check', scope, ...attempt }, state);
    if (decision.outcome === 'locked') throw new DomainError('TOO_MANY_FAILED_SIGN_INS', { retryAfterSeconds: decision.retryAfterSeconds });
    // A lock lifted by a password change is recorded as lifted, in the same append as the sign-in.
    unit.append(streamId, decision.events);
  }

  const fail = (reason: SignInFailureReason): SignInOutcome<T> => {
    // Counted for the identifier, and for the account it names.
    for (const { scope, streamId, state } of guards) {
      const failure =
        scope === 'account' && reason !== 'user_not_found'
          ? AccountSignInFailed({ userId: userId!, via: identity.via, reason })
          : identity.failure(reason, userId);
      if (scope === 'account' && reason === 'user_not_found') continue;
      const decision = decideSignInGuard({ type: 'record_failure', scope, failure, ...attempt }, state);
      if (decision.outcome === 'recorded') unit.append(streamId, decision.events, storm ? { expected: 'any' } : {});
    }
    return { refusal: identity.refusal };
  };

  const account = signInAccount?.account;
  const user = signInAccount?.user;
  if (userId === null) {
    await password.againstDecoy();
    return fail('user_not_found');
  }
  const credential = account?.status === 'active' ? credentialOf(account) : null;
  if (account?.status !== 'active' || !credential || !user) {
    await password.againstDecoy();
    return fail('credential_account_not_found');
  }
  if (!(await password.matches(credential.passwordHash))) return fail('invalid_password');
  unit.actAs(userId);
  const gates = await passSignInGates(
    unit,
    ctx,
    { streamId: found!.streamId, account, passwordChange: signInAccount.passwordChange },
    { lock: 'checked', callbackURL, unverified: identity.unverified },
  );
  if (!gates.passed) return { refusal: gates.refusal };
  await rehashIfDated(ctx, unit, found!.streamId, gates.account, credential.passwordHash, password);
  const signedIn = gates.userEvents.reduce<User | null>((u, event) => evolveUserAnswer(u, event, unit.now.toISOString()), user);
  return open({ unit, request, account: gates.account, user: signedIn ?? user });
}

/**
 * A hash that is not how hashes are made now (a better-auth scrypt hash, argon2 at another cost) is replaced
 * in the sign-in's own append, now that the password is known right: one argon2 run more, once per account.
 * A current hash is known by its header, with no work at all.
 */
async function rehashIfDated(ctx: IdentityPorts, unit: UnitOfWork, userStream: string, account: ActiveAccount, hash: string, password: PasswordCheck): Promise<void> {
  const passwordHash = await password.rehash(hash);
  if (passwordHash === null) return;
  const cost = ctx.config.password.argon2;
  const previous = isBetterAuthScryptHash(hash) ? 'better-auth-scrypt' : 'argon2';
  unit.append(userStream, decideAccount({ type: 'rehash-password', replacing: hash, passwordHash, previous, cost }, account));
}

/**
 * The end of every password sign-in, within its command: a new session (a day long for rememberMe false, as
 * better-auth), appended with everything the sign-in was decided on.
 */
export function openSignInSession(
  ctx: IdentityPorts,
  { unit, request, user }: VerifiedSignIn,
  options: { rememberMe?: boolean | undefined; callbackURL?: string | undefined; method: 'email-password' | 'username-password' },
): SignInOutcome<OpenedSignIn> {
  // The Location is decided before the session is appended: a callbackURL that cannot go out in a header
  // must be refused, not fail the answer of a session that then exists for no client.
  const location = options.callbackURL ? redirectLocation(options.callbackURL, ctx.config.trustedOrigins) : null;
  const rememberMe = options.rememberMe !== false;
  const signIn = newSession(ctx, request, unit.now, rememberMe);
  openSession(unit, user.id, signIn.session, options.method);
  return { answer: { token: signIn.token, user, rememberMe, callbackURL: options.callbackURL, location } };
}
