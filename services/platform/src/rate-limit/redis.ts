import type { Redis } from 'ioredis';
import type { RateLimitCount, RateLimitStore } from './rate-limit-store.ts';

/**
 * INCR and the window's expiry in one script, so the count and its expiry cannot be split by a crash or a
 * concurrent caller (a key left without a TTL would block its client forever).
 */
const HIT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if count == tonumber(ARGV[2]) or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

type RateLimitHit = (key: string, windowMs: number, by: number) => Promise<[number, number]>;

export class RedisRateLimitStore implements RateLimitStore {
  private readonly hitScript: RateLimitHit;

  constructor(
    redis: Redis,
    private readonly keyPrefix: string,
  ) {
    // A defined command runs by EVALSHA (the script's hash, not its text) on every request after the first.
    if (!('portcullisRateLimitHit' in redis)) {
      redis.defineCommand('portcullisRateLimitHit', { numberOfKeys: 1, lua: HIT });
    }
    const command = (redis as unknown as { portcullisRateLimitHit: RateLimitHit }).portcullisRateLimitHit;
    this.hitScript = command.bind(redis);
  }

  async hit(key: string, windowMs: number, by = 1): Promise<RateLimitCount> {
    const [count, ttl] = await this.hitScript(`${this.keyPrefix}rate-limit:${key}`, windowMs, by);
    return { count: Number(count), resetInMs: Math.max(0, Number(ttl)) };
  }
}
