import type { ChainableCommander, Redis } from 'ioredis';
import { deleteKeysMatching } from '../cache/redis.ts';
import { checkpointNotice } from './postgres-target.ts';
import { CheckpointFencedError, type ProjectedEvent, type ProjectionTarget } from './projection.ts';

/**
 * What a Redis projection handler sees: reads that include the batch's own earlier writes, and writes that
 * are queued into the one MULTI/EXEC that also moves the checkpoint.
 */
export interface RedisBatch {
  getJson<T>(key: string): Promise<T | null>;
  setJson(key: string, value: unknown, expireAtMs?: number): void;
  getString(key: string): Promise<string | null>;
  setString(key: string, value: string, expireAtMs?: number): void;
  delete(key: string): void;
  members(key: string): Promise<Set<string>>;
  addMember(key: string, member: string): Promise<void>;
  removeMember(key: string, member: string): Promise<void>;
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
  apply(batch: RedisBatch, projected: ProjectedEvent): Promise<void>;
}

export class RedisProjectionTarget implements ProjectionTarget {
  readonly name: string;
  readonly handles: ReadonlySet<string> | undefined;

  /** `redis` must be a connection of its own: WATCH is per connection. */
  constructor(
    private readonly redis: Redis,
    private readonly projection: RedisProjection,
  ) {
    this.name = projection.name;
    this.handles = projection.handles;
  }

  async readCheckpoint(): Promise<number> {
    return Number((await this.redis.get(this.projection.checkpointKey)) ?? 0);
  }

  async applyBatch(events: readonly ProjectedEvent[], from: number, to: number): Promise<void> {
    const { checkpointKey: key, checkpointChannel } = this.projection;
    // WATCH and the fence's read in one round trip; EXEC ends the WATCH, so only a batch that stops short of
    // it has to UNWATCH. Published only once the move is made; see the end.
    const [watched, read] = (await this.redis.pipeline().watch(key).get(key).exec()) ?? [];
    let executed = false;
    try {
      if (watched?.[0]) throw watched[0];
      if (read?.[0]) throw read[0];
      if (Number(read?.[1] ?? 0) !== from) throw new CheckpointFencedError(this.name, from);
      const multi = this.redis.multi();
      const batch = new OverlayBatch(this.redis, multi);
      for (const projected of events) await this.projection.apply(batch, projected);
      multi.set(key, String(to));
      executed = true;
      const result = await multi.exec();
      if (result === null) throw new CheckpointFencedError(this.name, from);
      const failed = result.find(([error]) => error);
      if (failed) throw failed[0];
    } finally {
      if (!executed) await this.redis.unwatch();
    }
    // Only once EXEC has answered: Redis pushes the tracking invalidations of the batch's keys before that
    // answer, so an api holding session answers in process has dropped the stale ones before it hears the
    // checkpoint moved. Published inside the MULTI, it would overtake them.
    await this.redis.publish(checkpointChannel, checkpointNotice(this.name, to));
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

  constructor(
    private readonly redis: Redis,
    private readonly multi: ChainableCommander,
  ) {}

  async getString(key: string): Promise<string | null> {
    const pending = this.pending.get(key);
    if (pending?.kind === 'value') return pending.value;
    return this.redis.get(key);
  }

  async getJson<T>(key: string): Promise<T | null> {
    const raw = await this.getString(key);
    return raw === null ? null : (JSON.parse(raw) as T);
  }

  setString(key: string, value: string, expireAtMs?: number): void {
    this.pending.set(key, { kind: 'value', value });
    if (expireAtMs === undefined) this.multi.set(key, value);
    else this.multi.set(key, value, 'PXAT', Math.max(1, Math.floor(expireAtMs)));
  }

  setJson(key: string, value: unknown, expireAtMs?: number): void {
    this.setString(key, JSON.stringify(value), expireAtMs);
  }

  delete(key: string): void {
    this.pending.set(key, { kind: 'value', value: null });
    this.multi.del(key);
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

  async addMember(key: string, member: string): Promise<void> {
    this.changeMember(key, member, true);
    this.multi.sadd(key, member);
  }

  async removeMember(key: string, member: string): Promise<void> {
    this.changeMember(key, member, false);
    this.multi.srem(key, member);
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
