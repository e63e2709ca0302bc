import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventLogDatabase } from '../../../../tests/support/event-log.ts';
import { deleteRedisKeys, describeOnRedisDeployments, uniqueRedisPrefix } from '../../../../tests/support/redis.ts';
import { createRedisClient, type Redis } from '../cache/redis.ts';
import { sql } from '../database/pool.ts';
import { BatchedRateLimitCounter } from './batched.ts';
import { PostgresRateLimitStore } from './postgres.ts';
import { RedisRateLimitStore } from './redis.ts';
import type { RateLimitCount, RateLimitStore } from './rate-limit-store.ts';

const WINDOW_MS = 10_000;
const noError = (error: unknown): never => {
  throw error;
};

/**
 * Batched counting over the real shared stores: one process counts exactly as if every hit went to the
 * store, the store ends up holding every hit, and replicas together pass at most one flush interval's worth
 * of the others' hits beyond the limit.
 */
interface SharedStore {
  readonly store: RateLimitStore;
  read(key: string): Promise<number>;
  close(): Promise<void>;
}

function batchedCounting(storeName: string, open: () => Promise<SharedStore>) {
  let shared: SharedStore;
  let store: RateLimitStore;
  let read: (key: string) => Promise<number>;
  const counters: BatchedRateLimitCounter[] = [];
  let keys = 0;

  beforeAll(async () => {
    shared = await open();
    ({ store } = shared);
    read = (key) => shared.read(key);
  });

  afterAll(async () => {
    // Counters send what they still hold on close, so the store goes last.
    await Promise.all(counters.map((c) => c.close()));
    await shared?.close();
  });

  const counter = (): BatchedRateLimitCounter => {
    // A long interval: the specs flush by hand, so nothing depends on timing.
    const created = new BatchedRateLimitCounter((key, windowMs, by) => store.hit(key, windowMs, by), { flushEveryMs: 60_000, onError: noError });
    counters.push(created);
    return created;
  };
  const hitOnce = async (c: BatchedRateLimitCounter, key: string): Promise<RateLimitCount> => (await c.hit(key, WINDOW_MS))!;

  it(`counts exactly in one process, and the store holds every hit once flushed (${storeName})`, async () => {
    const c = counter();
    const key = `one-${(keys += 1)}-${Date.now()}`;
    const seen: number[] = [];
    for (let i = 0; i < 120; i += 1) seen.push((await hitOnce(c, key)).count);
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    // Only the window's first hit went to the store so far.
    expect(await read(key)).toBe(1);
    await c.flush();
    expect(await read(key)).toBe(120);
    const after = await hitOnce(c, key);
    expect(after.count).toBe(121);
    expect(after.resetInMs).toBeGreaterThan(0);
    expect(after.resetInMs).toBeLessThanOrEqual(WINDOW_MS);
  });

  it(`keeps counting the hits a flush is sending until the store has answered (${storeName})`, async () => {
    // The store answers the flush only when the test lets it, so hits land while the send is in flight.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const c = new BatchedRateLimitCounter(
      async (key, windowMs, by) => {
        if (holding) await held;
        return store.hit(key, windowMs, by);
      },
      { flushEveryMs: 60_000, onError: noError },
    );
    counters.push(c);
    const key = `in-flight-${(keys += 1)}-${Date.now()}`;
    for (let i = 0; i < 10; i += 1) await hitOnce(c, key);
    holding = true;
    const flushing = c.flush();
    expect((await hitOnce(c, key)).count).toBe(11);
    release();
    await flushing;
    expect((await hitOnce(c, key)).count).toBe(12);
    await c.flush();
    expect(await read(key)).toBe(12);
  });

  it(`lets replicas learn each other's counts at each flush (${storeName})`, async () => {
    const [a, b] = [counter(), counter()];
    const key = `two-${(keys += 1)}-${Date.now()}`;
    for (let i = 0; i < 40; i += 1) await hitOnce(a, key);
    for (let i = 0; i < 30; i += 1) await hitOnce(b, key);
    // Before a flush each sees its own hits over what the store said when it last asked: the store has
    // counted only each window's first hit (a's, then b's).
    expect((await hitOnce(a, key)).count).toBe(41);
    expect(await read(key)).toBe(2);
    await a.flush();
    await b.flush();
    expect(await read(key)).toBe(71);
    // b heard a's hits when it sent its own; a hears b's at its next send.
    expect((await hitOnce(b, key)).count).toBe(72);
    expect((await hitOnce(a, key)).count).toBe(43);
    // b's last hit is still b's own: a's send brings the store to 72, so a's next hit is the 73rd it knows.
    await a.flush();
    expect((await hitOnce(a, key)).count).toBe(73);
    await Promise.all([a.flush(), b.flush()]);
    expect(await read(key)).toBe(74);
  });
}

describe('batched rate-limit counting on Postgres', () =>
  batchedCounting('postgres', async () => {
    const db = await createEventLogDatabase('batched_rate_limit');
    return {
      store: new PostgresRateLimitStore(db.pool),
      read: async (key) => Number((await db.pool.maybeOneFirst(sql.unsafe`SELECT count FROM rate_limit WHERE key = ${key}`)) ?? 0),
      close: () => db.close(),
    };
  }));

describeOnRedisDeployments('batched rate-limit counting', (deployment) =>
  batchedCounting('redis', async () => {
    const { url } = deployment();
    const prefix = uniqueRedisPrefix();
    const redis: Redis = createRedisClient(url, { name: 'batched-rate-limit-spec' });
    return {
      store: new RedisRateLimitStore(redis, prefix),
      read: async (key) => Number((await redis.get(`${prefix}rate-limit:${key}`)) ?? 0),
      close: async () => {
        await redis.quit();
        await deleteRedisKeys(url, prefix);
      },
    };
  }));
