import type { BetterAuthOptions } from 'better-auth';
import type { Redis } from 'ioredis';

type SecondaryStorage = NonNullable<BetterAuthOptions['secondaryStorage']>;

/**
 * better-auth's secondary storage on ioredis, as a deployment writes it (better-auth ships no Redis adapter
 * in 1.7): plain string values with the TTL it asks for, every key under a prefix of the run's own so
 * teardown can delete them. `increment` is what its rate limiter counts with: the TTL is set only when the
 * counter is created, in the same transaction as the increment.
 */
export function redisSecondaryStorage(redis: Redis, keyPrefix: string): SecondaryStorage {
  const keyOf = (key: string): string => `${keyPrefix}${key}`;
  return {
    get: (key) => redis.get(keyOf(key)),
    getAndDelete: (key) => redis.getdel(keyOf(key)),
    set: async (key, value, ttl) => {
      if (ttl !== undefined && ttl > 0) await redis.set(keyOf(key), value, 'EX', Math.ceil(ttl));
      else await redis.set(keyOf(key), value);
    },
    delete: async (key) => {
      await redis.del(keyOf(key));
    },
    increment: async (key, ttl) => {
      const replies = await redis.multi().set(keyOf(key), 0, 'EX', Math.max(1, Math.ceil(ttl)), 'NX').incr(keyOf(key)).exec();
      const counted = replies?.[1];
      if (!counted || counted[0]) throw counted?.[0] ?? new Error('increment: transaction aborted');
      return Number(counted[1]);
    },
  };
}
