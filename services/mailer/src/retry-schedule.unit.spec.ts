import { describe, expect, it } from 'vitest';
import { afterTemporaryFailure, retryDelayMs } from './retry-schedule.ts';

const defaults = { retryWindowSeconds: 86_400, retryBaseMs: 2000, retryMaxMs: 300_000 };
const start = new Date('2026-01-01T00:00:00Z');
const at = (ms: number): Date => new Date(start.getTime() + ms);
const middle = (): number => 0.5;

describe('retry backoff', () => {
  it('doubles from the base up to the cap, within ±20 %', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 1000, 10_000, middle))).toEqual([1000, 2000, 4000, 8000, 10_000]);
    expect(retryDelayMs(1, 1000, 10_000, () => 0)).toBe(800);
    expect(retryDelayMs(1, 1000, 10_000, () => 1)).toBe(1200);
  });
});

describe('after a temporary failure', () => {
  const linkExpiresAt = at(3 * 86_400_000);

  it('retries after the backoff, however many attempts came before, while the window lasts', () => {
    expect(afterTemporaryFailure({ attempt: 1, failedAt: start, firstAttemptedAt: start, linkExpiresAt }, defaults, middle)).toEqual({
      retry: true,
      nextAttemptAt: at(2000),
    });
    // Two hundred attempts in, twelve hours into the outage: the capped backoff, not a dead letter.
    const failedAt = at(12 * 3_600_000);
    expect(afterTemporaryFailure({ attempt: 200, failedAt, firstAttemptedAt: start, linkExpiresAt }, defaults, middle)).toEqual({
      retry: true,
      nextAttemptAt: new Date(failedAt.getTime() + 300_000),
    });
  });

  it('makes the last attempt at the end of the window, and dead-letters a failure at or after it', () => {
    const windowEnd = at(86_400_000);
    expect(afterTemporaryFailure({ attempt: 300, failedAt: at(86_400_000 - 1000), firstAttemptedAt: start, linkExpiresAt }, defaults, middle)).toEqual({
      retry: true,
      nextAttemptAt: windowEnd,
    });
    const dead = afterTemporaryFailure({ attempt: 301, failedAt: windowEnd, firstAttemptedAt: start, linkExpiresAt }, defaults, middle);
    expect(dead).toEqual({ retry: false, reason: 'still failing when its retry window (MAILER_RETRY_WINDOW_SECONDS=86400) ended' });
  });

  it('tries a link that expires first no later than its expiry, where it is dead-lettered', () => {
    const expiresSoon = at(60_000);
    expect(afterTemporaryFailure({ attempt: 9, failedAt: at(50_000), firstAttemptedAt: start, linkExpiresAt: expiresSoon }, defaults, middle)).toEqual({
      retry: true,
      nextAttemptAt: expiresSoon,
    });
  });

  it('never retries with a window of zero', () => {
    expect(afterTemporaryFailure({ attempt: 1, failedAt: start, firstAttemptedAt: start, linkExpiresAt }, { ...defaults, retryWindowSeconds: 0 }).retry).toBe(false);
  });
});
