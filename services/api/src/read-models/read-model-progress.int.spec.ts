import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { projectionNames, UserRegistered, streams } from '@portcullis/contracts';
import {
  CHECKPOINT_CHANNEL,
  checkpointNotice,
  createLogger,
  createRedisClient,
  sessionCacheLayout,
  sql,
  type Redis,
  type SessionCacheLayout,
} from '@portcullis/platform';
import { createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { deleteRedisKeys, describeOnRedisDeployments, describeWithRedis, testRedisUrl, uniqueRedisPrefix } from '../../../../tests/support/redis.ts';
import { ReadModelProgress } from './read-model-progress.ts';
import { LocalSessionCache } from '../session/local-session-cache.ts';

const log = createLogger({ name: 'spec', level: 'silent', format: 'json' });
const MAX_LAG_MS = 1000;

/** A clock the spec moves, so "a read model stuck for longer than the bound" takes no waiting. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let at = 1_000_000;
  return { now: () => at, advance: (ms) => (at += ms) };
}

/** Progress on a spec's log, polling often so that specs wait little. */
function progressOn(
  db: EventLogDatabase,
  options: { redis?: ConstructorParameters<typeof ReadModelProgress>[0]['redis']; now?: () => number } = {},
): ReadModelProgress {
  return new ReadModelProgress({
    pool: db.pool,
    databaseUrl: db.url,
    store: db.store,
    redis: options.redis ?? null,
    timeoutMs: 10_000,
    maxLagMs: MAX_LAG_MS,
    pollIntervalMs: 20,
    log,
    ...(options.now ? { now: options.now } : {}),
  });
}

async function appendSomething(db: EventLogDatabase): Promise<number> {
  const userId = randomUUID();
  const { position } = await db.store.append([
    domainWrite(streams.user(userId), 'no_stream', [UserRegistered({ userId, email: `${userId}@x.test`, name: 'X', image: null, emailVerified: false })], metadataAt(new Date())),
  ]);
  return position;
}

async function setCheckpoint(db: EventLogDatabase, name: string, position: number): Promise<void> {
  await db.pool.query(sql.unsafe`
    INSERT INTO projection_checkpoints (name, position) VALUES (${name}, ${position})
    ON CONFLICT (name) DO UPDATE SET position = ${position}`);
}

/**
 * Read-your-writes waits, and when a read model may be believed about a session. Notices carry positions
 * no checkpoint holds where a spec is about notices, so a pass cannot come from the periodic re-read.
 */
describe('ReadModelProgress', () => {
  let db: EventLogDatabase;
  let progress: ReadModelProgress;

  beforeAll(async () => {
    db = await createEventLogDatabase('read_model_progress');
    progress = progressOn(db);
    await progress.start();
  });

  afterAll(async () => {
    await progress?.close();
    await db?.close();
  });

  it('answers a wait for the sessions table once it is announced, whatever identity and organizations lag', async () => {
    const caughtUp = progress.waitFor(41, [projectionNames.sessions]);
    await db.pool.query(sql.unsafe`SELECT pg_notify(${CHECKPOINT_CHANNEL}, ${checkpointNotice(projectionNames.sessions, 41)})`);
    expect(await caughtUp).toBe(true);
    expect(progress.caughtUpTo).toBeLessThan(41);
  });

  it('answers a wait that concerns no projection at once', async () => {
    expect(await progress.waitFor(1_000_000, [])).toBe(true);
  });

});

/** Trust and revocations, on a log of their own: the notices above carry positions no log here reaches. */
describe('ReadModelProgress trust', () => {
  let db: EventLogDatabase;
  let progress: ReadModelProgress;
  const clock = manualClock();

  beforeAll(async () => {
    db = await createEventLogDatabase('read_model_trust');
    progress = progressOn(db, { now: clock.now });
    await progress.start();
  });

  afterAll(async () => {
    await progress?.close();
    await db?.close();
  });

  it('believes the session table while it is at a head read within the bound, and not once it has stayed behind longer', async () => {
    await setCheckpoint(db, projectionNames.sessions, await appendSomething(db));
    await waitFor(() => progress.trusted('sessions'), { timeoutMs: 5000, message: 'the table to be believed' });

    // The log moves on; the table does not. Within the bound it is still believed, past it no longer.
    await appendSomething(db);
    const moved = await appendSomething(db);
    await waitFor(() => progress.logHead >= moved, { timeoutMs: 5000, message: 'a poll of the new head' });
    expect(progress.trusted('sessions')).toBe(true);
    clock.advance(MAX_LAG_MS + 1);
    await waitFor(() => !progress.trusted('sessions'), { timeoutMs: 5000, message: 'the stuck table to stop being believed' });

    // Caught up again: believed again at the next poll.
    await setCheckpoint(db, projectionNames.sessions, await db.store.headPosition());
    await waitFor(() => progress.trusted('sessions'), { timeoutMs: 5000, message: 'the caught-up table to be believed again' });
  });

  it('answers a revocation once its read models have it, or once the bound has passed without them', async () => {
    const applied = await appendSomething(db);
    const settled = progress.settle(applied, new Set(['session.revoked.v2']), 'revocation');
    await setCheckpoint(db, projectionNames.sessions, applied);
    await settled;

    const stuck = await appendSomething(db);
    const startedAt = Date.now();
    await progress.settle(stuck, new Set(['session.revoked.v2']), 'revocation');
    // Nothing applied it: it waited out the bound (real time), no more, and not the 10 s read-your-writes timeout.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(MAX_LAG_MS);
    expect(Date.now() - startedAt).toBeLessThan(5000);
  });
});

describeOnRedisDeployments('ReadModelProgress with the Redis session cache', (deployment) => {
  let redisUrl: string;
  const prefix = uniqueRedisPrefix();
  let layout: SessionCacheLayout;
  let db: EventLogDatabase;
  let redis: Redis;
  let progress: ReadModelProgress;

  beforeAll(async () => {
    redisUrl = deployment().url;
    db = await createEventLogDatabase('read_model_progress_redis');
    redis = createRedisClient(redisUrl, { name: 'read-model-progress-spec' });
    layout = sessionCacheLayout(prefix, await db.store.logId());
    progress = progressOn(db, { redis: { client: redis, url: redisUrl, layout } });
    await progress.start();
  });

  afterAll(async () => {
    await progress?.close();
    await deleteRedisKeys(redisUrl, prefix).catch(() => {});
    redis?.disconnect();
    await db?.close();
  });

  it('reads no Redis generation until one is served, and then only one that names this log’s events', async () => {
    expect(progress.redisKeys).toBeNull();
    expect(progress.readModels).not.toContain(projectionNames.sessionCache);

    const head = await appendSomething(db);
    const foreign = layout.generation('foreign');
    await redis.set(foreign.checkpoint, `${head}:${randomUUID()}`);
    await redis.set(layout.pointerKey, JSON.stringify({ current: 'foreign', building: null }));
    // Built from another history: seen, and refused.
    await waitFor(async () => (await redis.get(layout.pointerKey)) !== null && progress.redisKeys === null && !progress.trusted('redis'), {
      timeoutMs: 2000,
      message: 'a poll of the foreign generation',
    });
    expect(progress.redisKeys).toBeNull();

    const own = layout.generation('own');
    await redis.set(own.checkpoint, `${head}:${(await db.store.eventIdAt(head))!}`);
    await redis.set(layout.pointerKey, JSON.stringify({ current: 'own', building: null }));
    await waitFor(() => progress.redisKeys?.generation === 'own' && progress.trusted('redis'), { timeoutMs: 5000, message: 'the own generation' });
    expect(progress.readModels).toContain(projectionNames.sessionCache);

    // Gone (FLUSHALL): not read again.
    await redis.del(layout.pointerKey);
    await redis.del(own.checkpoint);
    await waitFor(() => progress.redisKeys === null && !progress.trusted('redis'), { timeoutMs: 5000, message: 'the lost generation to be dropped' });
  });
});

/** The in-process cache is not used with a cluster (see createApiContext): held entries on one server only. */
describeWithRedis('ReadModelProgress with entries held in process', () => {
  const redisUrl = testRedisUrl()!;
  const prefix = uniqueRedisPrefix();
  let layout: SessionCacheLayout;
  let db: EventLogDatabase;
  let redis: Redis;

  beforeAll(async () => {
    db = await createEventLogDatabase('read_model_progress_held');
    redis = createRedisClient(redisUrl, { name: 'read-model-progress-held-spec' });
    layout = sessionCacheLayout(prefix, await db.store.logId());
  });

  afterAll(async () => {
    await deleteRedisKeys(redisUrl, prefix).catch(() => {});
    redis?.disconnect();
    await db?.close();
  });

  it('hears notices on the in-process cache’s subscriber, and believes held entries only as far as they have arrived there', async () => {
    const local = new LocalSessionCache({ redisUrl, keyPrefix: layout.sessionKeyPrefix, maxEntries: 10, ttlMs: 60_000, log });
    const shared = progressOn(db, { redis: { client: redis, url: redisUrl, layout, held: local } });
    onTestFinished(async () => {
      await shared.close();
      await local.close();
    });
    const ownConnections = async (): Promise<number> =>
      String(await redis.call('CLIENT', 'LIST')).split('\n').filter((line) => line.includes(' name=portcullis-api-checkpoints ')).length;
    const before = await ownConnections();
    await shared.start();
    const caughtUp = shared.waitFor(1_000_031, [projectionNames.sessions]);
    await redis.publish(layout.checkpointChannel, checkpointNotice(projectionNames.sessions, 1_000_031));
    expect(await caughtUp).toBe(true);
    expect(await ownConnections()).toBe(before);

    const head = await appendSomething(db);
    const generation = layout.generation('held');
    await redis.set(generation.checkpoint, `${head}:${(await db.store.eventIdAt(head))!}`);
    await redis.set(layout.pointerKey, JSON.stringify({ current: 'held', building: null }));
    await waitFor(() => local.isLive && shared.trusted('held'), { timeoutMs: 5000, message: 'held entries to be believed' });
  });
});
