import { sql, type DatabasePool } from '../database/pool.ts';
import type { RateLimitCount, RateLimitStore } from './rate-limit-store.ts';

const PRUNE_EVERY_MS = 60_000;

/**
 * Counters in the `rate_limit` table, for deployments without Redis. One upsert per request: the row lock
 * taken by ON CONFLICT serialises concurrent hits on a key across processes, and the database's clock
 * decides the window, so replicas with drifting clocks agree.
 */
export class PostgresRateLimitStore implements RateLimitStore {
  private lastPrune = 0;

  constructor(
    private readonly pool: DatabasePool,
    private readonly onPruneError: (error: unknown) => void = () => {},
  ) {}

  async hit(key: string, windowMs: number, by = 1): Promise<RateLimitCount> {
    const row = (await this.pool.one(sql.unsafe`
      INSERT INTO rate_limit AS r (key, count, window_ends_at)
      VALUES (${key}, ${by}, clock_timestamp() + ${windowMs} * interval '1 millisecond')
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN r.window_ends_at <= clock_timestamp() THEN ${by} ELSE LEAST(r.count, 2147483646 - ${by}) + ${by} END,
        window_ends_at = CASE WHEN r.window_ends_at <= clock_timestamp() THEN EXCLUDED.window_ends_at ELSE r.window_ends_at END
      RETURNING count, GREATEST(0, ceil(EXTRACT(EPOCH FROM (window_ends_at - clock_timestamp())) * 1000))::bigint AS reset_in_ms`)) as {
      count: number;
      reset_in_ms: number | string;
    };
    this.pruneNowAndThen();
    return { count: Number(row.count), resetInMs: Number(row.reset_in_ms) };
  }

  /** Closed windows are dead rows; one process in a minute deleting them keeps the table as small as the traffic. */
  private pruneNowAndThen(): void {
    const now = Date.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    this.pool.query(sql.unsafe`DELETE FROM rate_limit WHERE window_ends_at < clock_timestamp()`).catch(this.onPruneError);
  }
}
