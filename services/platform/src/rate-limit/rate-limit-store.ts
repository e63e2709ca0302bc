/** What one counted request learns from the shared counter. */
export interface RateLimitCount {
  /** Requests in the current window, this one included. */
  readonly count: number;
  /** Milliseconds until the window closes and the count starts again. */
  readonly resetInMs: number;
}

/**
 * A fixed-window request counter shared by every api replica. `hit` counts one request under `key` and is
 * atomic: concurrent hits from several processes each see a distinct count, so no burst slips through a
 * read-then-write race.
 */
export interface RateLimitStore {
  /** Counts `by` requests at once (default one). */
  hit(key: string, windowMs: number, by?: number): Promise<RateLimitCount>;
}
