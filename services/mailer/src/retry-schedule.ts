export interface RetrySettings {
  /** How long a job is retried, counted from its first attempt (Postfix's maximal_queue_lifetime). */
  readonly retryWindowSeconds: number;
  readonly retryBaseMs: number;
  /** The longest wait between two attempts (Postfix's maximal_backoff_time). */
  readonly retryMaxMs: number;
}

/** Exponential backoff with ±20 % jitter: base, 2·base, 4·base… capped at max. `attempt` counts from 1. */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const delay = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), maxMs);
  return Math.round(delay * (0.8 + 0.4 * random()));
}

export type AfterTemporaryFailure = { readonly retry: true; readonly nextAttemptAt: Date } | { readonly retry: false; readonly reason: string };

/**
 * What follows a temporary failure at `failedAt`: the next attempt after the backoff, or, once the retry
 * window is over, the dead letter. Time bounds it, never a count of attempts: an outage costs a job its
 * window whatever the backoff settings make of it. The next attempt never falls after the window's end (the
 * last attempt is made at the end, so the window is the outage a mail survives) nor after its link expires
 * (that attempt dead-letters it as soon as the link is worthless, not up to a backoff later).
 */
export function afterTemporaryFailure(
  failure: { readonly attempt: number; readonly failedAt: Date; readonly firstAttemptedAt: Date; readonly linkExpiresAt: Date },
  settings: RetrySettings,
  random: () => number = Math.random,
): AfterTemporaryFailure {
  const windowEndsAt = failure.firstAttemptedAt.getTime() + settings.retryWindowSeconds * 1000;
  if (failure.failedAt.getTime() >= windowEndsAt) {
    return { retry: false, reason: `still failing when its retry window (MAILER_RETRY_WINDOW_SECONDS=${settings.retryWindowSeconds}) ended` };
  }
  const backoffEndsAt = failure.failedAt.getTime() + retryDelayMs(failure.attempt, settings.retryBaseMs, settings.retryMaxMs, random);
  return { retry: true, nextAttemptAt: new Date(Math.min(backoffEndsAt, windowEndsAt, failure.linkExpiresAt.getTime())) };
}
