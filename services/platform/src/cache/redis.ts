import { Redis } from 'ioredis';

export type { Redis } from 'ioredis';

export function createRedisClient(
  url: string,
  options: { name: string; lazyConnect?: boolean; autoPipelining?: boolean; protocol?: 2 | 3 },
): Redis {
  return new Redis(url, {
    connectionName: options.name,
    // RESP2 where a connection must receive what ioredis hands on only as pub/sub messages (tracking
    // invalidations redirected to a subscriber); ioredis's RESP3 default elsewhere.
    ...(options.protocol ? { protocol: options.protocol } : {}),
    lazyConnect: options.lazyConnect ?? false,
    // Batches concurrent commands into one write; not for a client that uses WATCH/MULTI, whose commands
    // must not be interleaved with others'.
    enableAutoPipelining: options.autoPipelining ?? false,
    // A cache read must fail fast when Redis is away, so the api can answer from Postgres instead.
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
}

export * from './session-cache-layout.ts';

/** Deletes every key matching a glob with SCAN and UNLINK, so a shared Redis is never blocked; returns the count. */
export async function deleteKeysMatching(redis: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

/** Deletes every key under a prefix, taken literally (glob characters in it are escaped). */
export function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<number> {
  return deleteKeysMatching(redis, `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`);
}

/**
 * The session cache needs Redis to keep what it was given until it expires: every key the projection
 * writes has an expiry, but the pointer to the served generation and its checkpoint have none, and an
 * eviction of either (or of an index set) would make the cache forget what it has applied. Only
 * `noeviction` promises that; memory is bounded by the keys' expiries instead. Answers what is wrong, or
 * null. INFO rather than CONFIG GET, which managed Redis services often refuse.
 */
export async function sessionCacheEvictionProblem(redis: Pick<Redis, 'info'>): Promise<string | null> {
  const info = await redis.info('memory');
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined || policy === 'noeviction') return null;
  return `Redis evicts keys (maxmemory-policy ${policy}); the session cache needs maxmemory-policy noeviction, so that it never silently forgets what it has applied. Set it (CONFIG SET maxmemory-policy noeviction, or in redis.conf) or run without REDIS_URL.`;
}
