import type { Redis } from '@portcullis/platform';

// The scripts read the clock of Redis itself, so registrations of processes on different hosts expire on
// one clock. Registrations live in a sorted set (member: process, score: expiry) beside a hash of positions.
const CLOCK = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)`;

/** Registers ARGV[instance] as having heard up to ARGV[position], for ARGV[ttl] ms. */
const registerStep = (instance: number, position: number, ttl: number): string => `
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[${ttl}]), ARGV[${instance}])
redis.call('HSET', KEYS[2], ARGV[${instance}], ARGV[${position}])`;

/** Drops lapsed registrations, then returns the registered processes that have heard less than ARGV[position]. */
const behindStep = (position: number): string => `
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ms)
for _, member in ipairs(expired) do redis.call('HDEL', KEYS[2], member) end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms) end
local behind = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if tonumber(redis.call('HGET', KEYS[2], member) or '0') < tonumber(ARGV[${position}]) then table.insert(behind, member) end
end
return behind`;

const REGISTER = `${CLOCK}${registerStep(1, 2, 3)}
return 1`;
const BEHIND = `${CLOCK}${behindStep(1)}`;
const REGISTER_AND_BEHIND = `${CLOCK}${registerStep(1, 2, 3)}${behindStep(4)}`;

interface HeldReaderCommands {
  portcullisHeldRegister(members: string, positions: string, instance: string, position: number, ttlMs: number): Promise<number>;
  portcullisHeldBehind(members: string, positions: string, position: number): Promise<string[]>;
  portcullisHeldRegisterAndBehind(members: string, positions: string, instance: string, heard: number, ttlMs: number, position: number): Promise<string[]>;
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
    redis.defineCommand('portcullisHeldRegisterAndBehind', { numberOfKeys: 2, lua: REGISTER_AND_BEHIND });
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

  /** `register(heard)` and `behind(position)` in one round trip. */
  registerAndBehind(heard: number, position: number): Promise<string[]> {
    return this.commands.portcullisHeldRegisterAndBehind(this.keys.members, this.keys.positions, this.instance, heard, this.ttlMs, position);
  }

  async leave(): Promise<void> {
    await this.redis.multi().zrem(this.keys.members, this.instance).hdel(this.keys.positions, this.instance).exec();
  }
}
