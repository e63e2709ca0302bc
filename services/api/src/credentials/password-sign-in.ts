import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, evolveUserAnswer, streams, type DomainEvent, type ErrorCode, type TimedEvent, type User } from '@portcullis/contracts';
import { verifyAgainstDecoy, verifyPassword, WrongExpectedVersionError, type StreamRead } from '@portcullis/platform';
import { commit, withRetryOnConflict } from '../commit.ts';
import type { ApiContext } from '../context.ts';
import { eventMetadata } from '../http/request-context.ts';
import { clearDontRemember, setSessionCookie } from '../http/session-cookies.ts';
import { newSession } from './new-session.ts';
import { sessionCreated } from './registration.decider.ts';
import { evolveAccount, initialAccountState, type AccountState, type ActiveAccount } from '../account/account.decider.ts';
import { foldStream, foldTimedStream, loadTimedStream, streamWrite } from '../write-model.ts';
import {
  decideSignInGuard,
  evolveSignInGuard,
  initialSignInGuard,
  type PasswordChange,
  type SignInAttempt,
} from './sign-in-guard.decider.ts';

export type SignInFailureReason = 'user_not_found' | 'credential_account_not_found' | 'invalid_password';

/** One way of naming an account at sign-in: an email or a username, with its own sign-in stream. */
export interface SignInIdentity {
  /** Lower-cased. */
  readonly identifier: string;
  /** `sign-in-<email>` or `sign-in-username-<username>`: failures and locks for this identifier. */
  readonly guardStream: string;
  /** The stream that reserves the identifier for an account, read together with the guard stream. */
  readonly reservationStream: string;
  /** The account that stream reserves the identifier for, or null. */
  readonly reservedFor: (reservation: StreamRead) => string | null;
  /** The failed-sign-in event for this kind of identifier (never with the attempted password). */
  readonly failure: (reason: SignInFailureReason, userId: string | null) => DomainEvent;
  /** The one answer for an unknown identifier, a missing password account and a wrong password alike. */
  readonly refusal: ErrorCode;
}

/** An email's or a username's reservation stream, folded: held by a user, or free. */
type ReservationState = { status: 'free' } | { status: 'reserved'; userId: string };

/** A `reservedFor` for a kind of reservation stream: the user it is reserved for, or null. */
export function reservationHolder(
  evolve: (state: ReservationState, event: DomainEvent) => ReservationState,
  initial: () => ReservationState,
): (reservation: StreamRead) => string | null {
  return (reservation) => {
    const { state } = foldStream(reservation, evolve, initial);
    return state.status === 'reserved' ? state.userId : null;
  };
}

/**
 * The account with the time of its latest password change, which lifts a lock set before it, and the user
 * as the sign-in answer shows it (folded as the session cache folds it, from the same stream).
 */
interface SignInAccount {
  readonly account: AccountState;
  readonly passwordChange: PasswordChange | null;
  readonly user: User | null;
}

const initialSignInAccount = (): SignInAccount => ({ account: initialAccountState(), passwordChange: null, user: null });

function evolveSignInAccount(state: SignInAccount, timed: TimedEvent): SignInAccount {
  const account = evolveAccount(state.account, timed.event);
  const user = evolveUserAnswer(state.user, timed.event, timed.occurredAt);
  if (timed.event.type === 'user.password_changed.v1') {
    return { account, passwordChange: { at: timed.occurredAt, via: timed.event.data.via }, user };
  }
  return { account, passwordChange: state.passwordChange, user };
}

/** Enough for every account signing in within minutes on a busy node; a miss costs one more read. */
const RESERVATION_HINT_LIMIT = 10_000;

/**
 * Which user an email or username was last seen reserved for, so that sign-in can read that user's stream
 * in the same query as the reservation itself. Only a guess: the decision is on the reservation read with
 * it, and a guess it contradicts costs one more read.
 */
export class ReservationHints {
  private readonly holders = new Map<string, string>();

  constructor(private readonly limit = RESERVATION_HINT_LIMIT) {}

  get(reservationStream: string): string | undefined {
    return this.holders.get(reservationStream);
  }

  remember(reservationStream: string, userId: string | null): void {
    // Deleted and re-inserted, so the map's order is least recently used first.
    this.holders.delete(reservationStream);
    if (userId === null) return;
    this.holders.set(reservationStream, userId);
    if (this.holders.size > this.limit) this.holders.delete(this.holders.keys().next().value!);
  }
}

/**
 * The identifier's sign-in stream, its reservation and, when it is reserved, its user's stream folded for
 * sign-in: one query when the reservation still names the user it did last time, two otherwise.
 */
async function readSignInStreams(
  ctx: ApiContext,
  identity: SignInIdentity,
): Promise<{ guard: StreamRead; userId: string | null; found: SignInAccount | null }> {
  const hinted = ctx.reservationHints.get(identity.reservationStream);
  const hintedStream = hinted === undefined ? null : streams.user(hinted);
  const reads = await ctx.store.readStreams([identity.guardStream, identity.reservationStream, ...(hintedStream ? [hintedStream] : [])]);
  const userId = identity.reservedFor(reads.get(identity.reservationStream)!);
  ctx.reservationHints.remember(identity.reservationStream, userId);
  if (userId === null) return { guard: reads.get(identity.guardStream)!, userId, found: null };
  const userStream = userId === hinted ? reads.get(hintedStream!)! : await ctx.store.readStream(streams.user(userId));
  return { guard: reads.get(identity.guardStream)!, userId, found: foldTimedStream(userStream, evolveSignInAccount, initialSignInAccount).state };
}

/** better-auth's X-Retry-After (its rate limiter's header), and the standard Retry-After beside it. */
function refuseLocked(reply: FastifyReply, retryAfterSeconds: number): never {
  reply.header('x-retry-after', String(retryAfterSeconds));
  reply.header('retry-after', String(retryAfterSeconds));
  throw new DomainError('TOO_MANY_FAILED_SIGN_INS');
}

/**
 * The password check shared by sign-in by email and by username: refuses a locked identifier (429) before
 * spending any work on the password, answers every failure alike (a decoy hash for unknown accounts, so the
 * time taken does not tell either), records each failure on the identifier's sign-in stream, and locks the
 * identifier once the failures within the window reach the limit.
 */
export async function verifyPasswordSignIn(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  identity: SignInIdentity,
  password: string,
): Promise<{ account: ActiveAccount; user: User }> {
  const now = ctx.clock();
  const policy = ctx.config.bruteForce;
  const { guard: guardStream, userId, found } = await readSignInStreams(ctx, identity);
  const guard = foldTimedStream(guardStream, evolveSignInGuard, initialSignInGuard);
  const attempt: SignInAttempt = {
    identifier: identity.identifier,
    userId,
    passwordChange: found?.passwordChange ?? null,
    now,
    policy,
  };
  const metadata = eventMetadata(request, now, null);

  const check = decideSignInGuard({ type: 'check', ...attempt }, guard.state);
  if (check.outcome === 'locked') refuseLocked(reply, check.retryAfterSeconds);
  if (check.outcome === 'open' && check.events.length > 0) {
    // The lift is a rule, not this write: a writer that got there first only delays its record to the next attempt.
    await ctx.store.append([streamWrite(identity.guardStream, guard.version, check.events, metadata)]).catch((error: unknown) => {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    });
  }

  const fail = async (reason: SignInFailureReason): Promise<never> => {
    const failure = identity.failure(reason, userId);
    try {
      await withRetryOnConflict(async () => {
        const { state, version } = await loadTimedStream(ctx.store, identity.guardStream, evolveSignInGuard, initialSignInGuard);
        const decision = decideSignInGuard({ type: 'record_failure', failure, ...attempt }, state);
        if (decision.outcome !== 'recorded') return;
        // No read model follows sign-in streams, so there is nothing to wait for.
        await ctx.store.append([streamWrite(identity.guardStream, version, decision.events, metadata)]);
      });
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      // A storm of attempts on one identifier kept moving the stream: record the failure anyway. The lock is
      // then decided on the next failure, which counts this one; the answer stays the same 401.
      await ctx.store.append([streamWrite(identity.guardStream, 'any', [failure], metadata)]);
    }
    throw new DomainError(identity.refusal);
  };

  const account = found?.account;
  if (!userId) {
    await verifyAgainstDecoy(password);
    return fail('user_not_found');
  }
  if (account?.status !== 'active' || !account.credential || !found?.user) {
    await verifyAgainstDecoy(password);
    return fail('credential_account_not_found');
  }
  if (!(await verifyPassword(account.credential.passwordHash, password))) return fail('invalid_password');
  return { account, user: found.user };
}

/**
 * The end of every password sign-in: a new session (a day long for rememberMe false, as better-auth), its
 * cookie and bearer header, and better-auth's answer `{redirect, token, url?, user}`.
 */
export async function openSignInSession(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  user: User,
  options: { rememberMe?: boolean | undefined; callbackURL?: string | undefined; method: 'email-password' | 'username-password' },
): Promise<{ redirect: boolean; token: string; url?: string; user: User }> {
  const userId = user.id;
  const now = ctx.clock();
  const rememberMe = options.rememberMe !== false;
  const signIn = newSession(ctx, request, now, rememberMe);
  await commit(ctx, [
    streamWrite(
      streams.session(signIn.session.sessionId),
      'no_stream',
      [sessionCreated(userId, signIn.session, options.method)],
      eventMetadata(request, now, userId),
    ),
  ]);
  if (rememberMe) clearDontRemember(request, reply, ctx.cookies);
  setSessionCookie(reply, ctx.cookies, signIn.token, { dontRemember: !rememberMe });
  if (options.callbackURL) reply.header('location', options.callbackURL);
  return {
    redirect: Boolean(options.callbackURL),
    token: signIn.token,
    ...(options.callbackURL ? { url: options.callbackURL } : {}),
    user,
  };
}
