import { describe, expect, it } from 'vitest';
import {
  AccountSignInFailed,
  AccountSignInLocked,
  AccountSignInUnlocked,
  SignInFailed,
  SignInLocked,
  SignInUnlocked,
  UsernameSignInFailed,
  type DomainEvent,
  type TimedEvent,
} from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import {
  decideSignInGuard,
  evolveSignInGuard,
  initialSignInGuard,
  type BruteForcePolicy,
  type GuardCommand,
  type PasswordChange,
} from './sign-in-guard.decider.ts';

const given = deciderSpec({ evolve: evolveSignInGuard, initial: initialSignInGuard, decide: decideSignInGuard });
const policy: BruteForcePolicy = { enabled: true, maxFailures: 3, windowSeconds: 600, lockSeconds: 900 };
const email = 'ada@example.com';
const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();
const timed = (seconds: number, event: DomainEvent): TimedEvent => ({ event, occurredAt: at(seconds) });

const failed = (userId: string | null = 'u1') => SignInFailed({ email, userId, reason: userId ? 'invalid_password' : 'user_not_found' });
const failedAt = (seconds: number, userId: string | null = 'u1') => timed(seconds, failed(userId));
const lockedAt = (seconds: number, userId: string | null = 'u1', failures = 3) =>
  timed(seconds, SignInLocked({ identifier: email, userId, failures, lockedUntil: at(seconds + policy.lockSeconds) }));

function attempt(
  seconds: number,
  overrides: { userId?: string | null; passwordChange?: PasswordChange | null; policy?: BruteForcePolicy; scope?: 'identifier' | 'account' } = {},
) {
  return {
    scope: overrides.scope ?? ('identifier' as const),
    identifier: email,
    userId: overrides.userId === undefined ? 'u1' : overrides.userId,
    passwordChange: overrides.passwordChange ?? null,
    now: new Date(at(seconds)),
    policy: overrides.policy ?? policy,
  };
}
const check = (seconds: number, overrides?: Parameters<typeof attempt>[1]): GuardCommand => ({ type: 'check', ...attempt(seconds, overrides) });
const fail = (seconds: number, overrides?: Parameters<typeof attempt>[1]): GuardCommand => ({
  type: 'record_failure',
  failure: failed(overrides?.userId === undefined ? 'u1' : overrides.userId),
  ...attempt(seconds, overrides),
});

describe('sign-in guard decider (brute-force protection)', () => {
  it('records failures below the limit without locking', () => {
    given([]).when(fail(0)).then({ outcome: 'recorded', events: [failed()] });
    given([failedAt(0)]).when(fail(10)).then({ outcome: 'recorded', events: [failed()] });
  });

  it('locks the identifier on the failure that reaches the limit within the window', () => {
    given([failedAt(0), failedAt(10)])
      .when(fail(20))
      .then({
        outcome: 'recorded',
        events: [failed(), SignInLocked({ identifier: email, userId: 'u1', failures: 3, lockedUntil: at(20 + 900) })],
      });
  });

  it('counts only the failures within the window', () => {
    // The first failure is 601 s old when the third comes: two in the window, no lock.
    given([failedAt(0), failedAt(300)]).when(fail(601)).then({ outcome: 'recorded', events: [failed()] });
  });

  it('locks an identifier without an account exactly as one with, so a lock tells nothing', () => {
    given([failedAt(0, null), failedAt(10, null)])
      .when(fail(20, { userId: null }))
      .then({
        outcome: 'recorded',
        events: [failed(null), SignInLocked({ identifier: email, userId: null, failures: 3, lockedUntil: at(920) })],
      });
    given([failedAt(0, null), failedAt(10, null), lockedAt(10, null)]).when(check(20, { userId: null })).then({
      outcome: 'locked',
      retryAfterSeconds: 890,
    });
  });

  it('refuses while locked, saying how long is left, and opens again when the lock runs out', () => {
    const history = [failedAt(0), failedAt(10), failedAt(20), lockedAt(20)];
    given(history).when(check(21)).then({ outcome: 'locked', retryAfterSeconds: 899 });
    given(history).when(check(919.5)).then({ outcome: 'locked', retryAfterSeconds: 1 });
    given(history).when(check(920)).then({ outcome: 'open', events: [] });
  });

  it('starts counting afresh after a lock: the failures that caused it are spent', () => {
    given([failedAt(0), failedAt(10), failedAt(20), lockedAt(20)]).when(fail(925)).then({ outcome: 'recorded', events: [failed()] });
  });

  it('records a failure that raced a lock in force, and does not lock again', () => {
    given([failedAt(0), failedAt(10), failedAt(20), lockedAt(20)]).when(fail(21)).then({ outcome: 'recorded', events: [failed()] });
  });

  it('lifts a lock when the password was reset after it, and records the lift', () => {
    const history = [failedAt(0), failedAt(10), failedAt(20), lockedAt(20)];
    given(history)
      .when(check(100, { passwordChange: { at: at(60), via: 'reset-password' } }))
      .then({ outcome: 'open', events: [SignInUnlocked({ identifier: email, userId: 'u1', reason: 'password_reset' })] });
    given(history)
      .when(check(100, { passwordChange: { at: at(60), via: 'change-password' } }))
      .then({ outcome: 'open', events: [SignInUnlocked({ identifier: email, userId: 'u1', reason: 'password_changed' })] });
  });

  it('keeps a lock that was set after the last password reset', () => {
    given([failedAt(100), failedAt(110), failedAt(120), lockedAt(120)])
      .when(check(130, { passwordChange: { at: at(60), via: 'reset-password' } }))
      .then({ outcome: 'locked', retryAfterSeconds: 890 });
  });

  it('does not count failures from before a password reset', () => {
    given([failedAt(0), failedAt(10)])
      .when(fail(30, { passwordChange: { at: at(20), via: 'reset-password' } }))
      .then({ outcome: 'recorded', events: [failed()] });
  });

  it('is open after a recorded lift', () => {
    given([failedAt(0), failedAt(10), failedAt(20), lockedAt(20), timed(60, SignInUnlocked({ identifier: email, userId: 'u1', reason: 'password_reset' }))])
      .when(check(61))
      .then({ outcome: 'open', events: [] });
  });

  it('counts username failures on a username stream alike', () => {
    const usernameFailure = UsernameSignInFailed({ username: 'ada', userId: 'u1', reason: 'invalid_password' });
    const state = [timed(0, usernameFailure), timed(5, usernameFailure)].reduce(evolveSignInGuard, initialSignInGuard());
    expect(state.failures).toEqual([at(0), at(5)]);
  });

  it('keeps an account guard the same way: failures by email and by username count together, and lock the account', () => {
    const byEmail = AccountSignInFailed({ userId: 'u1', via: 'email', reason: 'invalid_password' });
    const byUsername = AccountSignInFailed({ userId: 'u1', via: 'username', reason: 'invalid_password' });
    given([timed(0, byEmail), timed(10, byUsername)])
      .when({ type: 'record_failure', failure: byEmail, ...attempt(20, { scope: 'account' }) })
      .then({ outcome: 'recorded', events: [byEmail, AccountSignInLocked({ userId: 'u1', failures: 3, lockedUntil: at(920) })] });
    const locked = [timed(0, byEmail), timed(10, byUsername), timed(20, byEmail), timed(20, AccountSignInLocked({ userId: 'u1', failures: 3, lockedUntil: at(920) }))];
    given(locked).when({ type: 'check', ...attempt(21, { scope: 'account' }) }).then({ outcome: 'locked', retryAfterSeconds: 899 });
    given(locked)
      .when({ type: 'check', ...attempt(100, { scope: 'account', passwordChange: { at: at(60), via: 'reset-password' } }) })
      .then({ outcome: 'open', events: [AccountSignInUnlocked({ userId: 'u1', reason: 'password_reset' })] });
  });

  it('does nothing when turned off: never locks, never refuses', () => {
    const off = { ...policy, enabled: false };
    given([failedAt(0), failedAt(10)]).when(fail(20, { policy: off })).then({ outcome: 'recorded', events: [failed()] });
    given([failedAt(0), failedAt(10), failedAt(20), lockedAt(20)]).when(check(21, { policy: off })).then({ outcome: 'open', events: [] });
  });
});
