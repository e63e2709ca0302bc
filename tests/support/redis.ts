import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteKeysWithPrefix, parsePointer, sessionCacheLayout, type SessionCacheKeys } from '@portcullis/platform';
import { describe, inject } from 'vitest';

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

/** Deletes every key under `prefix`; returns how many were removed. */
export async function deleteRedisKeys(url: string, prefix: string): Promise<number> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => {});
  await client.connect();
  try {
    return await deleteKeysWithPrefix(client, prefix);
  } finally {
    client.disconnect();
  }
}

/** The keys of the session cache generation readers are pointed at, for a log, or null while none is served. */
export async function servedSessionCacheKeys(redis: Redis, prefix: string, logId: string): Promise<SessionCacheKeys | null> {
  const layout = sessionCacheLayout(prefix, logId);
  const { current } = parsePointer(await redis.get(layout.pointerKey));
  return current === null ? null : layout.generation(current);
}
