import { Redis } from 'ioredis';

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

export async function keyExists(url: string, key: string): Promise<boolean> {
  const client = connect(url);
  try {
    await client.connect();
    return (await client.exists(key)) === 1;
  } finally {
    client.disconnect();
  }
}

/** Deletes every key under `prefix` (SCAN, not KEYS, so a shared Redis is never blocked); returns the count. */
export async function deleteKeysWithPrefix(url: string, prefix: string): Promise<number> {
  const client = connect(url);
  await client.connect();
  try {
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await client.unlink(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    client.disconnect();
  }
}
