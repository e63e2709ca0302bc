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

/** The keys of the session cache, in one place for the projection that writes them and the api that reads them. */
export function sessionCacheKeys(prefix: string) {
  return {
    session: (tokenHash: string) => `${prefix}session:${tokenHash}`,
    sessionToken: (sessionId: string) => `${prefix}session-token:${sessionId}`,
    user: (userId: string) => `${prefix}user:${userId}`,
    userSessions: (userId: string) => `${prefix}user-sessions:${userId}`,
    /** Token hashes of the cached sessions whose active organization (or team) this is: who to clear when it goes. */
    organizationSessions: (organizationId: string) => `${prefix}organization-sessions:${organizationId}`,
    teamSessions: (teamId: string) => `${prefix}team-sessions:${teamId}`,
    checkpoint: (projection: string) => `${prefix}checkpoint:${projection}`,
    /** Pub/sub channel: `<projection>:<position>` each time a Redis projection's checkpoint moves. */
    checkpointChannel: `${prefix}checkpoints`,
    all: `${prefix}*`,
  } as const;
}
export type SessionCacheKeys = ReturnType<typeof sessionCacheKeys>;

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
