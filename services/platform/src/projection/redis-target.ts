import type { Redis } from 'ioredis';
import { deleteKeysMatching } from '../cache/redis.ts';
import { checkpointNotice } from './postgres-target.ts';
import { CheckpointFencedError, type ProjectedEvent, type ProjectionTarget } from './projection.ts';

/**
 * What a Redis projection handler sees: reads that include the batch's own earlier writes, and writes that
 * are queued for the one script that also moves the checkpoint.
 */
export interface RedisBatch {
  getJson<T>(key: string): Promise<T | null>;
  setJson(key: string, value: unknown, expireAtMs?: number): void;
  getString(key: string): Promise<string | null>;
  setString(key: string, value: string, expireAtMs?: number): void;
  delete(key: string): void;
  members(key: string): Promise<Set<string>>;
  addMember(key: string, member: string): void;
  removeMember(key: string, member: string): void;
}

export interface RedisProjection {
  readonly name: string;
  /** A glob matching every key it owns, deleted on rebuild. */
  readonly keyPattern: string;
  readonly checkpointKey: string;
  /** Where each move of the checkpoint is published, once made. */
  readonly checkpointChannel: string;
  /** The event types it is built from (absent: every type). */
  readonly handles?: ReadonlySet<string>;
  /**
   * String keys `apply` will read for this event, fetched for the whole batch in one round trip before it
   * runs rather than one at a time. A guess: a key read but not named here is simply read then.
   */
  readsOf?(projected: ProjectedEvent): readonly string[];
  apply(batch: RedisBatch, projected: ProjectedEvent): Promise<void>;
}

/** A write queued by a batch: a command on one key. */
interface QueuedWrite {
  readonly command: 'SET' | 'DEL' | 'SADD' | 'SREM';
  readonly key: string;
  readonly args: readonly string[];
}

/**
 * A batch's writes and the move of its checkpoint, all or none, in one round trip. KEYS[1] is the
 * checkpoint, ARGV[1] and ARGV[2] the positions it moves from and to; then each write as its command, the
 * index of its key in KEYS, its argument count and its arguments. Answers 0, writing nothing, when the
 * checkpoint is not at `from`: another holder or a rebuild has moved it, so this batch is fenced off.
 */
const PROJECT_BATCH_LUA = `
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
local i = 3
while i <= #ARGV do
  local count = tonumber(ARGV[i + 2])
  redis.call(ARGV[i], KEYS[tonumber(ARGV[i + 1])], unpack(ARGV, i + 3, i + 2 + count))
  i = i + 3 + count
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;

const PROJECT_BATCH_COMMAND = 'portcullisProjectBatch';
type ProjectBatchCommand = (numberOfKeys: number, ...keysAndArgs: string[]) => Promise<number>;

export class RedisProjectionTarget implements ProjectionTarget {
  readonly name: string;
  readonly handles: ReadonlySet<string> | undefined;
  private readonly projectBatch: ProjectBatchCommand;

  constructor(
    private readonly redis: Redis,
    private readonly projection: RedisProjection,
  ) {
    this.name = projection.name;
    this.handles = projection.handles;
    // ioredis sends EVALSHA, and the script itself once after a NOSCRIPT (a restarted or flushed Redis).
    if (!(PROJECT_BATCH_COMMAND in redis)) redis.defineCommand(PROJECT_BATCH_COMMAND, { lua: PROJECT_BATCH_LUA });
    const command = (redis as unknown as Record<string, ProjectBatchCommand>)[PROJECT_BATCH_COMMAND]!;
    this.projectBatch = command.bind(redis);
  }

  async readCheckpoint(): Promise<number> {
    return Number((await this.redis.get(this.projection.checkpointKey)) ?? 0);
  }

  async applyBatch(events: readonly ProjectedEvent[], from: number, to: number): Promise<void> {
    const { checkpointKey, checkpointChannel } = this.projection;
    // Reads need no fence of their own: a holder that wrote since must have moved the checkpoint too.
    const batch = new OverlayBatch(this.redis, await this.prefetch(events));
    for (const projected of events) await this.projection.apply(batch, projected);
    const keys = [checkpointKey];
    const keyIndex = new Map<string, number>();
    const args = [String(from), String(to)];
    for (const write of batch.writes) {
      let index = keyIndex.get(write.key);
      if (index === undefined) {
        index = keys.push(write.key);
        keyIndex.set(write.key, index);
      }
      args.push(write.command, String(index), String(write.args.length), ...write.args);
    }
    if ((await this.projectBatch(keys.length, ...keys, ...args)) !== 1) throw new CheckpointFencedError(this.name, from);
    // Only once the script has answered: Redis pushes the tracking invalidations of the batch's keys before
    // that answer, so an api holding session answers in process has dropped the stale ones before it hears
    // the checkpoint moved. Published within the script, the notice would overtake them.
    await this.redis.publish(checkpointChannel, checkpointNotice(this.name, to));
  }

  private async prefetch(events: readonly ProjectedEvent[]): Promise<Map<string, string | null>> {
    const keys = [...new Set(events.flatMap((projected) => this.projection.readsOf?.(projected) ?? []))];
    if (keys.length === 0) return new Map();
    const values = await this.redis.mget(keys);
    return new Map(keys.map((key, i) => [key, values[i] ?? null]));
  }

  async reset(): Promise<void> {
    await deleteKeysMatching(this.redis, this.projection.keyPattern);
    await this.redis.multi().set(this.projection.checkpointKey, '0').publish(this.projection.checkpointChannel, checkpointNotice(this.name, 0)).exec();
  }
}

/**
 * What the batch has queued for a key. A set is tracked as the members added and removed since the batch
 * began (`cleared` when the key was deleted first), so adding a member never needs to read the set.
 */
type Pending =
  | { kind: 'value'; value: string | null }
  | { kind: 'set'; cleared: boolean; changes: Map<string, boolean> };

class OverlayBatch implements RedisBatch {
  private readonly pending = new Map<string, Pending>();
  readonly writes: QueuedWrite[] = [];

  /** `fetched`: string values read for the batch before any of its writes. */
  constructor(
    private readonly redis: Redis,
    private readonly fetched: ReadonlyMap<string, string | null>,
  ) {}

  async getString(key: string): Promise<string | null> {
    const pending = this.pending.get(key);
    if (pending?.kind === 'value') return pending.value;
    if (pending === undefined && this.fetched.has(key)) return this.fetched.get(key)!;
    return this.redis.get(key);
  }

  async getJson<T>(key: string): Promise<T | null> {
    const raw = await this.getString(key);
    return raw === null ? null : (JSON.parse(raw) as T);
  }

  setString(key: string, value: string, expireAtMs?: number): void {
    this.pending.set(key, { kind: 'value', value });
    const expiry = expireAtMs === undefined ? [] : ['PXAT', String(Math.max(1, Math.floor(expireAtMs)))];
    this.writes.push({ command: 'SET', key, args: [value, ...expiry] });
  }

  setJson(key: string, value: unknown, expireAtMs?: number): void {
    this.setString(key, JSON.stringify(value), expireAtMs);
  }

  delete(key: string): void {
    this.pending.set(key, { kind: 'value', value: null });
    this.writes.push({ command: 'DEL', key, args: [] });
  }

  async members(key: string): Promise<Set<string>> {
    const pending = this.pending.get(key);
    if (pending?.kind === 'value') return new Set();
    const members = pending?.cleared ? new Set<string>() : new Set(await this.redis.smembers(key));
    for (const [member, present] of pending?.changes ?? []) {
      if (present) members.add(member);
      else members.delete(member);
    }
    return members;
  }

  addMember(key: string, member: string): void {
    this.changeMember(key, member, true);
    this.writes.push({ command: 'SADD', key, args: [member] });
  }

  removeMember(key: string, member: string): void {
    this.changeMember(key, member, false);
    this.writes.push({ command: 'SREM', key, args: [member] });
  }

  private changeMember(key: string, member: string, present: boolean): void {
    let pending = this.pending.get(key);
    if (pending?.kind !== 'set') {
      // After a delete in this batch the set starts empty; otherwise from what Redis holds.
      pending = { kind: 'set', cleared: pending?.kind === 'value', changes: new Map() };
      this.pending.set(key, pending);
    }
    pending.changes.set(member, present);
  }
}
