import type { Redis } from 'ioredis';

/**
 * What a Redis projection handler sees: reads that include the batch's own earlier writes, and writes that
 * are queued for the one script that also moves the checkpoint.
 */
export interface RedisBatch {
  getJson<T>(key: string): Promise<T | null>;
  /** As `getJson` for each key, those the batch does not know yet read in one round trip. */
  getJsonAll<T>(keys: readonly string[]): Promise<Array<T | null>>;
  /** `expireAtMs`: when the key expires; 'keep' keeps the expiry it had (SET's KEEPTTL); absent: none. */
  setJson(key: string, value: unknown, expireAtMs?: number | 'keep'): void;
  getString(key: string): Promise<string | null>;
  setString(key: string, value: string, expireAtMs?: number | 'keep'): void;
  delete(key: string): void;
  members(key: string): Promise<Set<string>>;
  addMember(key: string, member: string): void;
  removeMember(key: string, member: string): void;
  /** Makes the key live at least until `atMs` (and no longer than it, if it had no expiry at all). */
  expireNoSoonerThan(key: string, atMs: number): void;
}

/** A write queued by a batch: a command on one key. */
export interface QueuedWrite {
  readonly command: 'SET' | 'DEL' | 'SADD' | 'SREM' | 'EXPIRENOSOONER';
  readonly key: string;
  readonly args: readonly string[];
}

/**
 * What the batch has queued for a key. A set is tracked as the members added and removed since the batch
 * began (`cleared` when the key was deleted first), so adding a member never needs to read the set.
 */
type Pending =
  | { kind: 'value'; value: string | null }
  | { kind: 'set'; cleared: boolean; changes: Map<string, boolean> };

/** What a batch read ahead, before any of its writes: string values, and set members. */
export interface Prefetched {
  readonly strings: ReadonlyMap<string, string | null>;
  readonly sets: ReadonlyMap<string, readonly string[]>;
}

export class OverlayBatch implements RedisBatch {
  private readonly pending = new Map<string, Pending>();
  readonly writes: QueuedWrite[] = [];

  /** `fetched`: string values read for the batch before any of its writes. */
  constructor(
    private readonly redis: Redis,
    private readonly fetched: ReadonlyMap<string, string | null>,
    private readonly fetchedSets: ReadonlyMap<string, readonly string[]> = new Map(),
  ) {}

  /** A string key's value as the batch knows it (its own write, or what was read ahead), if it does. */
  private known(key: string): { readonly value: string | null } | undefined {
    const pending = this.pending.get(key);
    if (pending?.kind === 'value') return { value: pending.value };
    if (pending === undefined && this.fetched.has(key)) return { value: this.fetched.get(key)! };
    return undefined;
  }

  async getString(key: string): Promise<string | null> {
    const known = this.known(key);
    return known ? known.value : this.redis.get(key);
  }

  async getJson<T>(key: string): Promise<T | null> {
    const raw = await this.getString(key);
    return raw === null ? null : (JSON.parse(raw) as T);
  }

  /** The values the batch leaves its string keys with (null: deleted). */
  *writtenValues(): Iterable<[string, string | null]> {
    for (const [key, pending] of this.pending) if (pending.kind === 'value') yield [key, pending.value];
  }

  async getJsonAll<T>(keys: readonly string[]): Promise<Array<T | null>> {
    const unknown = [...new Set(keys.filter((key) => this.known(key) === undefined))];
    const read = unknown.length === 0 ? [] : await this.redis.mget(unknown);
    const fromRedis = new Map(unknown.map((key, i) => [key, read[i] ?? null]));
    return keys.map((key) => {
      const known = this.known(key);
      const raw = known ? known.value : (fromRedis.get(key) ?? null);
      return raw === null ? null : (JSON.parse(raw) as T);
    });
  }

  setString(key: string, value: string, expireAtMs?: number | 'keep'): void {
    // Redis drops a key set to expire in the past at once; so does what the batch reads back.
    if (typeof expireAtMs === 'number' && expireAtMs <= Date.now()) {
      this.delete(key);
      return;
    }
    this.pending.set(key, { kind: 'value', value });
    const expiry =
      expireAtMs === undefined ? [] : expireAtMs === 'keep' ? ['KEEPTTL'] : ['PXAT', String(Math.max(1, Math.floor(expireAtMs)))];
    this.writes.push({ command: 'SET', key, args: [value, ...expiry] });
  }

  setJson(key: string, value: unknown, expireAtMs?: number | 'keep'): void {
    this.setString(key, JSON.stringify(value), expireAtMs);
  }

  delete(key: string): void {
    this.pending.set(key, { kind: 'value', value: null });
    this.writes.push({ command: 'DEL', key, args: [] });
  }

  async members(key: string): Promise<Set<string>> {
    const pending = this.pending.get(key);
    if (pending?.kind === 'value') return new Set();
    const members = pending?.cleared ? new Set<string>() : new Set(this.fetchedSets.get(key) ?? (await this.redis.smembers(key)));
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

  expireNoSoonerThan(key: string, atMs: number): void {
    this.writes.push({ command: 'EXPIRENOSOONER', key, args: [String(Math.max(1, Math.floor(atMs)))] });
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
