import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AccountSignInFailed,
  DomainError,
  evolveUserAnswer,
  streams,
  type DomainEvent,
  type ErrorCode,
  type EventMetadata,
  type TimedEvent,
  type User,
} from '@portcullis/contracts';
import { verifyAgainstDecoy, verifyPassword, WrongExpectedVersionError, type StreamRead, type StreamWrite } from '@portcullis/platform';
import { commit, withRetryOnConflict } from '../commit.ts';
import type { ApiContext } from '../context.ts';
import { eventMetadata, requestMetadataOf } from '../http/request-context.ts';
import { redirectLocation } from '../http/redirect.ts';
import { clearDontRemember, setSessionCookie } from '../http/session-cookies.ts';
import { newSession } from '../session/new-session.ts';
import { sessionOpeningEvents } from '../session/session-lifecycle.ts';
import { evolveAccount, initialAccountState, type AccountState, type ActiveAccount } from './account.decider.ts';
import { foldStream, foldTimedStream, streamWrite, unchangedStream, type Loaded } from '../write-model.ts';
import {
  decideSignInGuard,
  evolveSignInGuard,
  initialSignInGuard,
  type PasswordChange,
  type SignInAttempt,
  type SignInGuardState,
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
  /** What the account's own failures say it was reached by. */
  readonly via: 'email' | 'username';
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

/**
 * Everything a password sign-in decides on, folded from the streams it reads: the identifier's sign-in
 * stream, its reservation, and, when the reservation names a user, that user's stream and the account's
 * sign-in stream. The versions are what the new session's append then requires of those streams (see
 * `unchangedSince`), so a sign-in never lands on a state that changed after it was decided: a password
 * changed, the address released or moved, a lock set meanwhile.
 */
export interface SignInRead {
  readonly guard: Loaded<SignInGuardState>;
  readonly reservationVersion: number;
  readonly userId: string | null;
  readonly found: Loaded<SignInAccount> | null;
  /** The account's failures and lock, counted over all of its identifiers; null without an account. */
  readonly accountGuard: Loaded<SignInGuardState> | null;
}

/** Enough for every account signing in within minutes on a busy node; a miss costs a read. */
const REMEMBERED_SIGN_IN_LIMIT = 10_000;

/**
 * The read behind each identifier's latest successful sign-in, so that the next one can skip reading its
 * streams: it is decided on the remembered read, and the session's append requires the streams to be at
 * the remembered versions. A change since makes that append fail, and the sign-in is decided again on a
 * fresh read. Only a successful sign-in is ever decided on a remembered read (see `signInWithPassword`).
 */
export class RememberedSignIns {
  private readonly reads = new Map<string, SignInRead>();

  constructor(private readonly limit = REMEMBERED_SIGN_IN_LIMIT) {}

  get(reservationStream: string): SignInRead | undefined {
    return this.reads.get(reservationStream);
  }

  remember(reservationStream: string, read: SignInRead): void {
    // Deleted and re-inserted, so the map's order is least recently used first.
    this.reads.delete(reservationStream);
    this.reads.set(reservationStream, read);
    if (this.reads.size > this.limit) this.reads.delete(this.reads.keys().next().value!);
  }

  forget(reservationStream: string): void {
    this.reads.delete(reservationStream);
  }
}

/** A user's streams a sign-in reads: the user's own and the account's sign-in stream. */
const accountStreams = (userId: string): [string, string] => [streams.user(userId), streams.accountSignIn(userId)];

/**
 * The identifier's sign-in stream, its reservation and, when it is reserved, its user's stream and the
 * account's sign-in stream: one query when the reservation names the user it named before (`hintedUserId`),
 * two otherwise.
 */
async function readSignInStreams(ctx: ApiContext, identity: SignInIdentity, hintedUserId: string | null): Promise<SignInRead> {
  const hinted = hintedUserId === null ? [] : accountStreams(hintedUserId);
  const reads = await ctx.store.readStreams([identity.guardStream, identity.reservationStream, ...hinted]);
  const reservation = reads.get(identity.reservationStream)!;
  const userId = identity.reservedFor(reservation);
  const guard = foldTimedStream(reads.get(identity.guardStream)!, evolveSignInGuard, initialSignInGuard);
  if (userId === null) return { guard, reservationVersion: reservation.version, userId, found: null, accountGuard: null };
  const [userStream, accountGuardStream] = accountStreams(userId);
  const userReads = userId === hintedUserId ? reads : await ctx.store.readStreams([userStream, accountGuardStream]);
  return {
    guard,
    reservationVersion: reservation.version,
    userId,
    found: foldTimedStream(userReads.get(userStream)!, evolveSignInAccount, initialSignInAccount),
    accountGuard: foldTimedStream(userReads.get(accountGuardStream)!, evolveSignInGuard, initialSignInGuard),
  };
}

/**
 * The versions a sign-in decided on `read` requires of its streams when it appends the session. A fresh
 * read leaves the sign-in streams out: failures others record during the password check do not undo a
 * correct password, and a storm of them cannot keep a sign-in from landing. A remembered read may be of any
 * age, so a lock set since, by this identifier or by the account's other one, must stop it.
 */
function unchangedSince(identity: SignInIdentity, read: SignInRead, fresh: boolean): StreamWrite[] {
  const guards: StreamWrite[] = [];
  if (!fresh) {
    guards.push(unchangedStream(identity.guardStream, read.guard.version));
    if (read.userId !== null && read.accountGuard) guards.push(unchangedStream(streams.accountSignIn(read.userId), read.accountGuard.version));
  }
  return [
    ...guards,
    unchangedStream(identity.reservationStream, read.reservationVersion),
    ...(read.userId !== null && read.found ? [unchangedStream(streams.user(read.userId), read.found.version)] : []),
  ];
}

/** better-auth's X-Retry-After (its rate limiter's header), and the standard Retry-After beside it. */
function refuseLocked(reply: FastifyReply, retryAfterSeconds: number): never {
  reply.header('x-retry-after', String(retryAfterSeconds));
  reply.header('retry-after', String(retryAfterSeconds));
  throw new DomainError('TOO_MANY_FAILED_SIGN_INS');
}

/** A sign-in decided on a remembered read did not come out as a plain success: decide it on a fresh read. */
class RememberedReadDoesNotDecide extends Error {}

/** A password sign-in that passed every check, with what its session's append must require. */
export interface VerifiedSignIn {
  readonly account: ActiveAccount;
  readonly user: User;
  /** The streams the sign-in was decided on, at the versions it read them. */
  readonly unchanged: readonly StreamWrite[];
}

/** At most this many fresh reads for one sign-in, when its streams keep changing between read and append. */
const SIGN_IN_ATTEMPTS = 5;

/**
 * The password sign-in shared by email and username: `open` gets a verified sign-in and appends its session
 * with `unchanged` beside it (see `openSignInSession`). The sign-in is first decided on the identifier's
 * remembered read, if there is one, when that decides a success; every other outcome, and every append that
 * finds a stream moved, is decided again on a fresh read. The password is verified once per hash.
 */
export async function signInWithPassword<T>(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  identity: SignInIdentity,
  password: string,
  open: (signIn: VerifiedSignIn) => Promise<T>,
): Promise<T> {
  const attempted = passwordCheck(password);
  let read = ctx.rememberedSignIns.get(identity.reservationStream);
  let hintedUserId = read?.userId ?? null;
  for (let attempt = 1; ; attempt += 1) {
    const fresh = read === undefined;
    read ??= await readSignInStreams(ctx, identity, hintedUserId);
    hintedUserId = read.userId;
    try {
      const answer = await open(await decidePasswordSignIn(ctx, request, reply, identity, read, fresh, attempted));
      if (worthRemembering(read)) ctx.rememberedSignIns.remember(identity.reservationStream, read);
      return answer;
    } catch (error) {
      // A refusal has written to the sign-in stream, or the read did not decide: either way it is stale.
      ctx.rememberedSignIns.forget(identity.reservationStream);
      const moved = error instanceof WrongExpectedVersionError && unchangedSince(identity, read, fresh).some((w) => w.streamId === error.streamId);
      if (moved && attempt >= SIGN_IN_ATTEMPTS) throw new DomainError('CONFLICT', { cause: error });
      if (!(error instanceof RememberedReadDoesNotDecide || moved)) throw error;
      read = undefined;
    }
  }
}

/**
 * A sign-in stream keeps up to a thousand failures while an identifier is under attack; remembering such
 * reads for many accounts would let an attacker fill the api's memory. An ordinary account has a handful.
 */
const REMEMBERED_FAILURES_LIMIT = 32;

function worthRemembering(read: SignInRead): boolean {
  return read.guard.state.failures.length <= REMEMBERED_FAILURES_LIMIT && (read.accountGuard?.state.failures.length ?? 0) <= REMEMBERED_FAILURES_LIMIT;
}

/** The attempted password, checked against a hash or against the decoy. */
interface PasswordCheck {
  /** Verified once per hash: a sign-in decided again on the same hash gets the same answer without argon2. */
  matches(hash: string): Promise<boolean>;
  againstDecoy(): Promise<void>;
}

function passwordCheck(password: string): PasswordCheck {
  let last: { hash: string; matches: Promise<boolean> } | null = null;
  return {
    matches: (hash) => {
      if (last?.hash !== hash) last = { hash, matches: verifyPassword(hash, password) };
      return last.matches;
    },
    againstDecoy: () => verifyAgainstDecoy(password),
  };
}

/**
 * The password check: refuses a locked identifier or account (429) before spending any work on the
 * password, answers every failure alike (a decoy hash for unknown accounts, so the time taken does not tell
 * either), records each failure on the identifier's sign-in stream and, for an account, on the account's,
 * and locks either once its failures within the window reach the limit. On a remembered read it only ever
 * decides a success: anything else, which may write or refuse, waits for a fresh read.
 */
async function decidePasswordSignIn(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  identity: SignInIdentity,
  read: SignInRead,
  fresh: boolean,
  password: PasswordCheck,
): Promise<VerifiedSignIn> {
  const now = ctx.clock();
  const { guard, userId, found, accountGuard } = read;
  const attempt: Omit<SignInAttempt, 'scope'> = {
    identifier: identity.identifier,
    userId,
    passwordChange: found?.state.passwordChange ?? null,
    now,
    policy: ctx.config.bruteForce,
  };
  // Only a lift or a failure writes to the sign-in stream: a successful sign-in does not build its metadata.
  const metadata = (): EventMetadata => eventMetadata(request, now, null);
  const decideOnFreshRead = (): void => {
    if (!fresh) throw new RememberedReadDoesNotDecide();
  };

  // The identifier's guard, and the account's when the identifier names one: either lock refuses.
  const guards = [
    { scope: 'identifier' as const, streamId: identity.guardStream, loaded: guard },
    ...(userId !== null && accountGuard ? [{ scope: 'account' as const, streamId: streams.accountSignIn(userId), loaded: accountGuard }] : []),
  ];
  const lifts: StreamWrite[] = [];
  for (const { scope, streamId, loaded } of guards) {
    const check = decideSignInGuard({ type: 'check', scope, ...attempt }, loaded.state);
    if (check.outcome === 'locked') {
      decideOnFreshRead();
      refuseLocked(reply, check.retryAfterSeconds);
    }
    if (check.events.length > 0) lifts.push(streamWrite(streamId, loaded.version, check.events, metadata()));
  }
  if (lifts.length > 0) {
    decideOnFreshRead();
    // The lift is a rule, not this write: a writer that got there first only delays its record to the next attempt.
    await ctx.store.append(lifts).catch((error: unknown) => {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    });
  }

  const fail = async (reason: SignInFailureReason): Promise<never> => {
    // Counted for the identifier, and for the account it names: one atomic append to both streams.
    const records = [
      { scope: 'identifier' as const, streamId: identity.guardStream, failure: identity.failure(reason, userId) },
      ...(userId !== null && reason !== 'user_not_found'
        ? [{ scope: 'account' as const, streamId: streams.accountSignIn(userId), failure: AccountSignInFailed({ userId, via: identity.via, reason }) }]
        : []),
    ];
    try {
      await withRetryOnConflict(async () => {
        const reads = await ctx.store.readStreams(records.map((r) => r.streamId));
        const writes: StreamWrite[] = [];
        for (const { scope, streamId, failure } of records) {
          const { state, version } = foldTimedStream(reads.get(streamId)!, evolveSignInGuard, initialSignInGuard);
          const decision = decideSignInGuard({ type: 'record_failure', scope, failure, ...attempt }, state);
          if (decision.outcome === 'recorded') writes.push(streamWrite(streamId, version, decision.events, metadata()));
        }
        // No read model follows sign-in streams, so there is nothing to wait for.
        if (writes.length > 0) await ctx.store.append(writes);
      });
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      // A storm of attempts kept moving the streams: record the failures anyway. The locks are then decided
      // on the next failure, which counts these; the answer stays the same 401.
      await ctx.store.append(records.map(({ streamId, failure }) => streamWrite(streamId, 'any', [failure], metadata())));
    }
    throw new DomainError(identity.refusal);
  };

  const account = found?.state.account;
  const user = found?.state.user;
  if (!userId) {
    decideOnFreshRead();
    await password.againstDecoy();
    return fail('user_not_found');
  }
  if (account?.status !== 'active' || !account.credential || !user) {
    decideOnFreshRead();
    await password.againstDecoy();
    return fail('credential_account_not_found');
  }
  if (!(await password.matches(account.credential.passwordHash))) {
    decideOnFreshRead();
    return fail('invalid_password');
  }
  return { account, user, unchanged: unchangedSince(identity, read, fresh) };
}

/**
 * The end of every password sign-in: a new session (a day long for rememberMe false, as better-auth), its
 * cookie and bearer header, and better-auth's answer `{redirect, token, url?, user}`. The session is
 * appended only if the streams the sign-in was decided on are unchanged.
 */
export async function openSignInSession(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  { user, unchanged }: VerifiedSignIn,
  options: { rememberMe?: boolean | undefined; callbackURL?: string | undefined; method: 'email-password' | 'username-password' },
): Promise<{ redirect: boolean; token: string; url?: string; user: User }> {
  const userId = user.id;
  // The Location is decided before the session is appended: a callbackURL that cannot go out in a header
  // must be refused, not fail the answer of a session that then exists for no client.
  const location = options.callbackURL ? redirectLocation(options.callbackURL, ctx.config.trustedOrigins) : null;
  const now = ctx.clock();
  const rememberMe = options.rememberMe !== false;
  const signIn = newSession(ctx, requestMetadataOf(request), now, rememberMe);
  const opening = sessionOpeningEvents(userId, signIn.session, options.method);
  const metadata = eventMetadata(request, now, userId);
  // The user stream is among `unchanged`: a password changed (and sessions ended) since the check fails it.
  await commit(
    ctx,
    [
      streamWrite(streams.session(signIn.session.sessionId), 'no_stream', [opening.session], metadata),
      streamWrite(streams.userSessions(userId), 'any', [opening.index], metadata),
    ],
    unchanged,
  );
  if (rememberMe) clearDontRemember(request, reply, ctx.cookies);
  setSessionCookie(reply, ctx.cookies, signIn.token, { dontRemember: !rememberMe });
  if (location) reply.header('location', location);
  return {
    redirect: Boolean(options.callbackURL),
    token: signIn.token,
    ...(options.callbackURL ? { url: options.callbackURL } : {}),
    user,
  };
}
