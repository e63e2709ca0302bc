import type { ChainableCommander, Redis } from 'ioredis';
import { deleteKeysMatching } from '../cache/redis.ts';
import { sql, type DatabasePool } from '../database/pool.ts';
import { CHECKPOINT_CHANNEL, checkpointNotice } from './postgres-target.ts';
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
  apply(batch: RedisBatch, projected: ProjectedEvent): Promise<void>;
}

export class RedisProjectionTarget implements ProjectionTarget {
  readonly name: string;

  /** `redis` must be a connection of its own: WATCH is per connection. */
  constructor(
    private readonly redis: Redis,
    private readonly projection: RedisProjection,
    private readonly pool: DatabasePool,
  ) {
    this.name = projection.name;
  }

  async readCheckpoint(): Promise<number> {
    return Number((await this.redis.get(this.projection.checkpointKey)) ?? 0);
  }

  async applyBatch(events: readonly ProjectedEvent[], from: number, to: number): Promise<void> {
    const key = this.projection.checkpointKey;
    await this.redis.watch(key);
    try {
      if (Number((await this.redis.get(key)) ?? 0) !== from) throw new CheckpointFencedError(this.name, from);
      const multi = this.redis.multi();
      const batch = new OverlayBatch(this.redis, multi);
      for (const projected of events) await this.projection.apply(batch, projected);
      multi.set(key, String(to));
      const result = await multi.exec();
      if (result === null) throw new CheckpointFencedError(this.name, from);
      const failed = result.find(([error]) => error);
      if (failed) throw failed[0];
    } finally {
      await this.redis.unwatch();
    }
    await this.pool.query(sql.unsafe`SELECT pg_notify(${CHECKPOINT_CHANNEL}, ${checkpointNotice(this.name, to)})`);
  }

  async reset(): Promise<void> {
    await deleteKeysMatching(this.redis, this.projection.keyPattern);
    await this.redis.set(this.projection.checkpointKey, '0');
    await this.pool.query(sql.unsafe`SELECT pg_notify(${CHECKPOINT_CHANNEL}, ${checkpointNotice(this.name, 0)})`);
  }
}

type Pending = { kind: 'value'; value: string | null } | { kind: 'set'; members: Set<string> };

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
    if (pending?.kind === 'set') return new Set(pending.members);
    if (pending?.kind === 'value') return new Set();
    return new Set(await this.redis.smembers(key));
  }

  async addMember(key: string, member: string): Promise<void> {
    const members = await this.members(key);
    members.add(member);
    this.pending.set(key, { kind: 'set', members });
    this.multi.sadd(key, member);
  }

  async removeMember(key: string, member: string): Promise<void> {
    const members = await this.members(key);
    members.delete(member);
    this.pending.set(key, { kind: 'set', members });
    this.multi.srem(key, member);
  }
}
