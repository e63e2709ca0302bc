import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRedisClient, deleteKeysWithPrefix, parsePointer, sessionCacheLayout, type SessionCacheKeys } from '@portcullis/platform';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { redisServerAvailable, startPrivateRedisCluster, type PrivateRedisCluster } from './redis-server.ts';

/** The Redis URL global-setup found reachable, or null when Redis-dependent tests must skip. */
export function testRedisUrl(): string | null {
  try {
    return inject('redisUrl') ?? null;
  } catch {
    // Outside a vitest worker: global-setup exported the same decision via env ('' meaning unreachable).
    return process.env.PORTCULLIS_TEST_REDIS_URL || null;
  }
}

/** `describe` when Redis is reachable; otherwise a visible skip rather than a silent one. */
export function describeWithRedis(name: string, fn: () => void): void {
  if (testRedisUrl()) {
    describe(name, fn);
    return;
  }
  console.warn(`[skip] ${name}: Redis not reachable`);
  describe.skip(name, fn);
}

/** A key prefix (for the app's REDIS_KEY_PREFIX) that no other test, worker or run shares. */
export function uniqueRedisPrefix(): string {
  return `test:${process.pid}:${randomBytes(5).toString('hex')}:`;
}

/** Deletes every key under `prefix` (on every master of a cluster); returns how many were removed. */
export async function deleteRedisKeys(url: string, prefix: string): Promise<number> {
  const client = createRedisClient(url, { name: 'test-cleanup', lazyConnect: true });
  client.on('error', () => {});
  await client.connect();
  try {
    return await deleteKeysWithPrefix(client, prefix);
  } finally {
    client.disconnect();
  }
}

/** Where a Redis suite runs: its URL, known once the suite's hooks have started it. */
export type RedisDeployment = () => { readonly url: string };

/**
 * Runs a Redis suite twice: against the shared Redis, and against a real 3-master Redis Cluster that the
 * suite starts itself (Debian's redis-server in cluster mode on free ports). A cluster refuses a script
 * whose keys span hash slots, which a single server allows: this is where that would show.
 */
export function describeOnRedisDeployments(name: string, suite: (deployment: RedisDeployment) => void): void {
  describeWithRedis(`${name} (Redis)`, () => suite(() => ({ url: testRedisUrl()! })));
  if (!redisServerAvailable()) {
    if (process.env.CI === 'true') throw new Error(`${name}: redis-server and redis-cli are needed to run against a Redis Cluster`);
    console.warn(`[skip] ${name} (Redis Cluster): redis-server not installed`);
    describe.skip(`${name} (Redis Cluster)`, () => suite(() => ({ url: '' })));
    return;
  }
  describe(`${name} (Redis Cluster)`, () => {
    let cluster: PrivateRedisCluster | undefined;
    beforeAll(async () => {
      cluster = await startPrivateRedisCluster(3);
    });
    afterAll(async () => {
      await cluster?.stop();
    });
    suite(() => ({ url: cluster!.url }));
  });
}

/** The keys of the session cache generation readers are pointed at, for a log, or null while none is served. */
export async function servedSessionCacheKeys(redis: Redis, prefix: string, logId: string): Promise<SessionCacheKeys | null> {
  const layout = sessionCacheLayout(prefix, logId);
  const { current } = parsePointer(await redis.get(layout.pointerKey));
  return current === null ? null : layout.generation(current);
}
