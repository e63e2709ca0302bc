import { Cluster, Redis, type RedisOptions } from 'ioredis';

export type { Redis } from 'ioredis';

const CLUSTER_SCHEME = 'redis+cluster:';

/** Whether a REDIS_URL names a Redis Cluster (`redis+cluster://host:port[,host:port…]`). */
export function isClusterUrl(url: string): boolean {
  return url.startsWith(`${CLUSTER_SCHEME}//`);
}

/** The seed nodes of a cluster URL, and the credentials every node shares (`redis+cluster://user:pass@h:p,h:p`). */
function clusterSeeds(url: string): { nodes: { host: string; port: number }[]; username?: string; password?: string } {
  const authority = url.slice(`${CLUSTER_SCHEME}//`.length).split('/')[0]!;
  const at = authority.lastIndexOf('@');
  const credentials = at >= 0 ? authority.slice(0, at) : '';
  const [username, password] = credentials.includes(':') ? credentials.split(':', 2) : [credentials, undefined];
  const nodes = authority
    .slice(at + 1)
    .split(',')
    .map((node) => {
      const [host, port] = node.split(':');
      return { host: host!, port: Number(port ?? 6379) };
    });
  return {
    nodes,
    ...(username ? { username: decodeURIComponent(username) } : {}),
    ...(password !== undefined ? { password: decodeURIComponent(password) } : {}),
  };
}

/** Whether a client is a cluster client: commands that address one node (SCAN, INFO) then go to each master. */
function isCluster(redis: Redis): boolean {
  return (redis as unknown) instanceof Cluster;
}

/**
 * A client for a REDIS_URL. A cluster URL gives an ioredis Cluster, typed as Redis: it routes every keyed
 * command to its slot's master, and the session cache keeps each script's keys in one slot (see
 * SessionCacheLayout). What must reach every node (SCAN, INFO) goes through `mastersOf`.
 */
export function createRedisClient(
  url: string,
  options: { name: string; lazyConnect?: boolean; autoPipelining?: boolean; protocol?: 2 | 3 },
): Redis {
  const nodeOptions: RedisOptions = {
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
  };
  if (isClusterUrl(url)) {
    const { nodes, ...credentials } = clusterSeeds(url);
    return new Cluster(nodes, {
      redisOptions: { ...nodeOptions, ...credentials },
      lazyConnect: options.lazyConnect ?? false,
      enableAutoPipelining: options.autoPipelining ?? false,
      enableOfflineQueue: true,
      clusterRetryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    }) as unknown as Redis;
  }
  return new Redis(url, nodeOptions);
}

/** The nodes a whole-keyspace command must reach: each master of a cluster, or the one server. */
function mastersOf(redis: Redis): Redis[] {
  return isCluster(redis) ? (redis as unknown as Cluster).nodes('master') : [redis];
}

export * from './session-cache-layout.ts';

/** Deletes every key matching a glob with SCAN and UNLINK (on every master), so a shared Redis is never blocked; returns the count. */
export async function deleteKeysMatching(redis: Redis, pattern: string): Promise<number> {
  let deleted = 0;
  await scanKeys(redis, pattern, async (keys) => {
    // One UNLINK per key: in a cluster a command's keys must share a slot, and these need not.
    for (const key of keys) deleted += await redis.unlink(key);
  });
  return deleted;
}

/** Every key matching a glob, batch by batch, on every master. */
export async function scanKeys(redis: Redis, pattern: string, onBatch: (keys: string[]) => Promise<void>): Promise<void> {
  for (const node of mastersOf(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await onBatch(keys);
    } while (cursor !== '0');
  }
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
export async function sessionCacheEvictionProblem(redis: Redis): Promise<string | null> {
  if (isCluster(redis)) await waitUntilReady(redis);
  for (const node of mastersOf(redis)) {
    const info = await node.info('memory');
    const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
    if (policy === undefined || policy === 'noeviction') continue;
    return `Redis evicts keys (maxmemory-policy ${policy}); the session cache needs maxmemory-policy noeviction, so that it never silently forgets what it has applied. Set it (CONFIG SET maxmemory-policy noeviction, or in redis.conf) or run without REDIS_URL.`;
  }
  return null;
}

/** A cluster client knows its masters only once it has read the slot map. */
async function waitUntilReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', resolve);
    redis.once('error', reject);
  });
}
