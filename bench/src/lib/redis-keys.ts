import { Redis } from 'ioredis';
import { deleteKeysWithPrefix as deleteKeysUnder } from '@portcullis/platform';

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
