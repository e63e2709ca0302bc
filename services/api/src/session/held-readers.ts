import type { Redis } from '@portcullis/platform';

// Both scripts read the clock of Redis itself, so registrations of processes on different hosts expire on
// one clock. Registrations live in a sorted set (member: process, score: expiry) beside a hash of positions.
const REGISTER = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[3]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1`;

const BEHIND = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ms)
for _, member in ipairs(expired) do redis.call('HDEL', KEYS[2], member) end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms) end
local behind = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if tonumber(redis.call('HGET', KEYS[2], member) or '0') < tonumber(ARGV[1]) then table.insert(behind, member) end
end
return behind`;

interface HeldReaderCommands {
  portcullisHeldRegister(members: string, positions: string, instance: string, position: number, ttlMs: number): Promise<number>;
  portcullisHeldBehind(members: string, positions: string, position: number): Promise<string[]>;
}

/**
 * The api processes that answer get-session from entries held in process, each with how far it has heard
 * the session cache's invalidations. A revocation is answered once every registered process has heard it
 * (or once none could still believe what it holds): Redis pushes the invalidation before the revocation
 * answers, but a process may read the next request off its socket before the push, which waits on another.
 * A process serves held entries only while its registration stands, so one missing from here holds nothing
 * it may answer from.
 */
export class HeldReaders {
  private readonly commands: HeldReaderCommands;

  constructor(
    private readonly redis: Redis,
    private readonly keys: { readonly members: string; readonly positions: string },
    /** This process's name among them. */
    readonly instance: string,
    /** How long a registration stands without being renewed. */
    readonly ttlMs: number,
  ) {
    redis.defineCommand('portcullisHeldRegister', { numberOfKeys: 2, lua: REGISTER });
    redis.defineCommand('portcullisHeldBehind', { numberOfKeys: 2, lua: BEHIND });
    this.commands = redis as unknown as HeldReaderCommands;
  }

  /** Registers (or renews) this process as holding entries current up to `position`. */
  async register(position: number): Promise<void> {
    await this.commands.portcullisHeldRegister(this.keys.members, this.keys.positions, this.instance, position, this.ttlMs);
  }

  /** The registered processes that have not yet heard everything up to `position`. */
  behind(position: number): Promise<string[]> {
    return this.commands.portcullisHeldBehind(this.keys.members, this.keys.positions, position);
  }

  async leave(): Promise<void> {
    await this.redis.multi().zrem(this.keys.members, this.instance).hdel(this.keys.positions, this.instance).exec();
  }
}
