import {
  AccountSignInLocked,
  AccountSignInUnlocked,
  SignInLocked,
  SignInUnlocked,
  type DomainEvent,
  type StreamModel,
  type TimedEvent,
} from '@portcullis/contracts';

/**
 * Brute-force protection beyond better-auth (which only limits per IP and path): failed sign-ins are
 * counted per identifier (one email, or one username), whatever the source IP, and after too many within
 * the window the identifier is locked for a while. An identifier without an account is counted and locked
 * exactly like one with, so neither the 401s nor the 429s tell an attacker which emails or usernames are
 * registered.
 *
 * The failures of an account are also counted on the account (`sign-in-account-<userId>`), whichever of its
 * identifiers named it, and lock it the same way: without that an account with an email and a username gave
 * an attacker twice the allowance per window. The same decider keeps both kinds of guard stream (`scope`).
 * A lock by the account's count does show that the email and the username it was reached by belong to one
 * account, to whoever spent the failures on both; that is the price of not doubling the guesses.
 */

export interface BruteForcePolicy {
  readonly enabled: boolean;
  readonly maxFailures: number;
  readonly windowSeconds: number;
  readonly lockSeconds: number;
}

/** Failures since the last lock or unlock (decision times, oldest first), and the latest lock. */
export interface SignInGuardState {
  readonly failures: readonly string[];
  readonly lock: { readonly lockedAt: string; readonly lockedUntil: string } | null;
}

/** More than any sane threshold: the state stays small on a stream an attacker keeps hitting. */
const FAILURES_KEPT = 1000;

export const initialSignInGuard = (): SignInGuardState => ({ failures: [], lock: null });

export function evolveSignInGuard(state: SignInGuardState, { event, occurredAt }: TimedEvent): SignInGuardState {
  switch (event.type) {
    case 'credentials.sign_in_failed.v1':
    case 'credentials.username_sign_in_failed.v1':
    case 'credentials.account_sign_in_failed.v1':
      return { ...state, failures: [...state.failures, occurredAt].slice(-FAILURES_KEPT) };
    case 'credentials.sign_in_locked.v1':
    case 'credentials.account_sign_in_locked.v1':
      // The failures that caused the lock are spent: after it expires the count starts again.
      return { failures: [], lock: { lockedAt: occurredAt, lockedUntil: event.data.lockedUntil } };
    case 'credentials.sign_in_unlocked.v1':
    case 'credentials.account_sign_in_unlocked.v1':
      return { failures: [], lock: null };
    default:
      return state;
  }
}

/** The account's latest password change, from its user stream: a reset lifts a lock set before it. */
export interface PasswordChange {
  readonly at: string;
  readonly via: 'change-password' | 'reset-password';
}

export interface SignInAttempt {
  /**
   * Which guard stream the command decides on: the identifier's (`sign-in-<email>`,
   * `sign-in-username-<username>`) or the account's (`sign-in-account-<userId>`, only with a `userId`).
   */
  readonly scope: 'identifier' | 'account';
  /** The lower-cased email or username. */
  readonly identifier: string;
  /** The account the identifier names, or null when there is none (decided the same way). */
  readonly userId: string | null;
  readonly passwordChange: PasswordChange | null;
  readonly now: Date;
  readonly policy: BruteForcePolicy;
}

export type GuardCommand =
  | ({ readonly type: 'check' } & SignInAttempt)
  /** `failure` is the failed-sign-in event the attempt produced; it is recorded whatever the outcome. */
  | ({ readonly type: 'record_failure'; readonly failure: DomainEvent } & SignInAttempt);

export type GuardDecision =
  | { readonly outcome: 'open'; readonly events: DomainEvent[] }
  | { readonly outcome: 'locked'; readonly retryAfterSeconds: number }
  | { readonly outcome: 'recorded'; readonly events: DomainEvent[] };

function changedAfter(change: PasswordChange | null, at: string): boolean {
  return change !== null && Date.parse(change.at) > Date.parse(at);
}

/** The lock in force at `now`, if any: not expired, and not lifted by a password change made after it. */
function lockInForce(state: SignInGuardState, attempt: SignInAttempt): SignInGuardState['lock'] {
  const lock = state.lock;
  if (!lock || Date.parse(lock.lockedUntil) <= attempt.now.getTime()) return null;
  if (attempt.userId !== null && changedAfter(attempt.passwordChange, lock.lockedAt)) return null;
  return lock;
}

export function decideSignInGuard(command: GuardCommand, state: SignInGuardState): GuardDecision {
  switch (command.type) {
    case 'check': {
      if (!command.policy.enabled) return { outcome: 'open', events: [] };
      const lock = lockInForce(state, command);
      if (lock) {
        const remainingMs = Date.parse(lock.lockedUntil) - command.now.getTime();
        return { outcome: 'locked', retryAfterSeconds: Math.max(1, Math.ceil(remainingMs / 1000)) };
      }
      // A lock still running on the clock but lifted by a password change is recorded as lifted.
      if (command.userId !== null && state.lock && Date.parse(state.lock.lockedUntil) > command.now.getTime()) {
        const reason = command.passwordChange?.via === 'change-password' ? 'password_changed' : 'password_reset';
        const unlocked =
          command.scope === 'account'
            ? AccountSignInUnlocked({ userId: command.userId, reason })
            : SignInUnlocked({ identifier: command.identifier, userId: command.userId, reason });
        return { outcome: 'open', events: [unlocked] };
      }
      return { outcome: 'open', events: [] };
    }
    case 'record_failure': {
      const events: DomainEvent[] = [command.failure];
      // A failure racing a lock that has just been set is recorded, and changes nothing more.
      if (!command.policy.enabled || lockInForce(state, command)) return { outcome: 'recorded', events };
      const windowStart = command.now.getTime() - command.policy.windowSeconds * 1000;
      const counted = state.failures.filter(
        (at) => Date.parse(at) > windowStart && !changedAfter(command.passwordChange, at),
      ).length;
      const failures = counted + 1;
      if (failures >= command.policy.maxFailures) {
        const lockedUntil = new Date(command.now.getTime() + command.policy.lockSeconds * 1000).toISOString();
        events.push(
          command.scope === 'account' && command.userId !== null
            ? AccountSignInLocked({ userId: command.userId, failures, lockedUntil })
            : SignInLocked({ identifier: command.identifier, userId: command.userId, failures, lockedUntil }),
        );
      }
      return { outcome: 'recorded', events };
    }
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
}

/**
 * A sign-in stream keeps up to a thousand failures while an identifier is under attack; holding such states
 * for many identifiers would let an attacker fill the api's memory. An ordinary account has a handful.
 */
const KEPT_FAILURES_LIMIT = 32;

/** `sign-in-<email>`, `sign-in-username-<username>` and `sign-in-account-<userId>`, as sign-ins decide on them. */
export const signInGuardModel: StreamModel<SignInGuardState> = {
  name: 'sign-in-guard',
  revision: 1,
  initial: initialSignInGuard,
  evolve: (state, event, time) => evolveSignInGuard(state, { event, occurredAt: time.occurredAt }),
  keepable: (state) => state.failures.length <= KEPT_FAILURES_LIMIT,
};
