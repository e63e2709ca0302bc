import { Redis } from 'ioredis';
import pg from 'pg';
import { deleteKeysWithPrefix as deleteKeysUnder, parsePointer, sessionCacheLayout } from '@portcullis/platform';

function connect(url: string): Redis {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => {});
  return client;
}

export async function redisReachable(url: string): Promise<boolean> {
  const client = connect(url);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * True once the session of `tokenHash` is in the Redis cache readers use: the current generation of the
 * cache built from this database's log (its keys carry the log's identity and the generation).
 */
export async function sessionIsCached(options: { redisUrl: string; keyPrefix: string; databaseUrl: string; tokenHash: string }): Promise<boolean> {
  const database = new pg.Client({ connectionString: options.databaseUrl });
  const client = connect(options.redisUrl);
  try {
    await database.connect();
    const { rows } = await database.query<{ id: string }>('SELECT id FROM event_log_identity');
    if (!rows[0]) return false;
    const layout = sessionCacheLayout(options.keyPrefix, rows[0].id);
    await client.connect();
    const { current } = parsePointer(await client.get(layout.pointerKey));
    if (current === null) return false;
    return (await client.exists(layout.generation(current).session(options.tokenHash))) === 1;
  } finally {
    client.disconnect();
    await database.end().catch(() => {});
  }
}

/** Deletes every key under `prefix`; returns the count. */
export async function deleteKeysWithPrefix(url: string, prefix: string): Promise<number> {
  const client = connect(url);
  await client.connect();
  try {
    return await deleteKeysUnder(client, prefix);
  } finally {
    client.disconnect();
  }
}
