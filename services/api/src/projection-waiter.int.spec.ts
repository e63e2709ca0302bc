import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { projectionNames } from '@portcullis/contracts';
import { CHECKPOINT_CHANNEL, checkpointNotice, createLogger, createRedisClient, sessionCacheKeys, sql, type Redis } from '@portcullis/platform';
import { createEventLogDatabase, type EventLogDatabase } from '../../../tests/support/event-log.ts';
import { deleteRedisKeys, describeWithRedis, testRedisUrl, uniqueRedisPrefix } from '../../../tests/support/redis.ts';
import { ProjectionWaiter } from './projection-waiter.ts';
import { LocalSessionCache } from './session/local-session-cache.ts';

/**
 * Without Redis the waiter hears projections by LISTEN; with it, every projection on Redis pub/sub. A wait
 * names the projections it needs. Timeouts are long: a wait that depended on the 200 ms re-read of
 * the stored checkpoints instead would still pass, so these notices carry positions no checkpoint holds.
 */
describe('ProjectionWaiter', () => {
  let db: EventLogDatabase;
  let waiter: ProjectionWaiter;

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_waiter');
    waiter = new ProjectionWaiter({ pool: db.pool, databaseUrl: db.url, redis: null, timeoutMs: 10_000, onTimeout: () => {} });
    await waiter.start();
  });

  afterAll(async () => {
    await waiter?.close();
    await db?.close();
  });

  it('answers a wait for the sessions table once it is announced, whatever identity and organizations lag', async () => {
    const caughtUp = waiter.waitFor(41, [projectionNames.sessions]);
    await db.pool.query(sql.unsafe`SELECT pg_notify(${CHECKPOINT_CHANNEL}, ${checkpointNotice(projectionNames.sessions, 41)})`);
    expect(await caughtUp).toBe(true);
    expect(waiter.caughtUpTo).toBeLessThan(41);
  });

  it('answers a wait that concerns no projection at once', async () => {
    expect(await waiter.waitFor(1_000_000, [])).toBe(true);
  });
});

describeWithRedis('ProjectionWaiter with the Redis session cache', () => {
  const redisUrl = testRedisUrl()!;
  const prefix = uniqueRedisPrefix();
  const keys = sessionCacheKeys(prefix);
  let db: EventLogDatabase;
  let redis: Redis;
  let waiter: ProjectionWaiter;

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_waiter_redis');
    redis = createRedisClient(redisUrl, { name: 'projection-waiter-spec' });
    waiter = new ProjectionWaiter({ pool: db.pool, databaseUrl: db.url, redis: { client: redis, url: redisUrl, keys }, timeoutMs: 10_000, onTimeout: () => {} });
    await waiter.start();
  });

  afterAll(async () => {
    await waiter?.close();
    await deleteRedisKeys(redisUrl, prefix).catch(() => {});
    redis?.disconnect();
    await db?.close();
  });

  it('hears the session cache move on its Redis channel', async () => {
    const caughtUp = waiter.waitFor(17, [projectionNames.sessionCache]);
    await redis.publish(keys.checkpointChannel, checkpointNotice(projectionNames.sessionCache, 17));
    expect(await caughtUp).toBe(true);
  });

  it('hears them on the local session cache’s subscriber when given it, not on a connection of its own', async () => {
    const local = new LocalSessionCache({ redisUrl, keyPrefix: keys.session(''), maxEntries: 10, ttlMs: 60_000, log: createLogger({ name: 'spec', level: 'silent', format: 'json' }) });
    const shared = new ProjectionWaiter({ pool: db.pool, databaseUrl: db.url, redis: { client: redis, url: redisUrl, keys, notices: local }, timeoutMs: 10_000, onTimeout: () => {} });
    onTestFinished(async () => {
      await shared.close();
      await local.close();
    });
    const ownConnections = async (): Promise<number> =>
      String(await redis.call('CLIENT', 'LIST')).split('\n').filter((line) => line.includes(' name=portcullis-api-checkpoints ')).length;
    const before = await ownConnections();
    await shared.start();
    const caughtUp = shared.waitFor(31, [projectionNames.sessions]);
    await redis.publish(keys.checkpointChannel, checkpointNotice(projectionNames.sessions, 31));
    expect(await caughtUp).toBe(true);
    expect(await ownConnections()).toBe(before);
  });

  it('hears the Postgres projections on the Redis channel too, where their projector announces them', async () => {
    const caughtUp = waiter.waitFor(23, [projectionNames.sessions, projectionNames.identity]);
    await redis.publish(keys.checkpointChannel, checkpointNotice(projectionNames.sessions, 23));
    await redis.publish(keys.checkpointChannel, checkpointNotice(projectionNames.identity, 23));
    expect(await caughtUp).toBe(true);
  });
});
