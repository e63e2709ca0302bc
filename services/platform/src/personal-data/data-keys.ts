import { LRUCache } from 'lru-cache';
import pg from 'pg';
import type { KeyWrapping } from '../crypto/personal-data-cipher.ts';
import { CHECKPOINT_CHANNEL } from '../projection/postgres-target.ts';

/**
 * Keys erased, told on the channel where api processes hear the projector's checkpoints (Postgres's, or
 * Redis's through `announce`): `keys-erased:<subject id>,<subject id>…`. A process that hears it forgets
 * those keys at once, rather than believing them until its cache's bound.
 */
const KEYS_ERASED = 'keys-erased:';

function keysErasedNotice(subjectIds: readonly string[]): string {
  return `${KEYS_ERASED}${subjectIds.join(',')}`;
}

/** The subject ids a keys-erased notice names, or null for any other notice. */
export function keysErasedIn(notice: string): string[] | null {
  return notice.startsWith(KEYS_ERASED) ? notice.slice(KEYS_ERASED.length).split(',').filter((id) => id !== '') : null;
}

/**
 * Where subjects' data keys live (`data_key`), wrapped. `null` answers "erased (or never had one)": the
 * caller then writes or reads the erased marker.
 */
export interface DataKeys {
  /** The keys to encrypt with, created on first use (those not kept, in one round trip); null for an erased user. */
  keysForWriting(subjectIds: readonly string[]): Promise<ReadonlyMap<string, Buffer | null>>;
  /** The keys to decrypt with, in one read for those not cached; a missing or erased one is null. */
  keysForReading(subjectIds: readonly string[]): Promise<ReadonlyMap<string, Buffer | null>>;
  /** Destroys the keys (a user's stays as a tombstone, so it is never created again) and forgets them here. */
  erase(subjectIds: readonly string[]): Promise<void>;
  /** Forgets cached keys (another process erased them). */
  forget(subjectIds: readonly string[]): void;
  close(): Promise<void>;
}

/** A stored data key that no secret of this process's ring opens. */
export class KeyOutsideRingError extends Error {
  constructor(
    readonly subjectId: string,
    readonly wrappedBy: string | null,
  ) {
    super(
      `the data key of ${subjectId} is wrapped by ${wrappedBy === null ? 'a secret' : `key ${wrappedBy}, a secret`} not in this process's AUTH_SECRETS: give every process the same ring (docs/operations.md#rotating-secrets)`,
    );
    this.name = 'KeyOutsideRingError';
  }
}

/** The `data_key` row of the key that names addresses: not a subject's, never erased. */
export const ADDRESS_NAMING_SUBJECT = 'k:address-naming';

interface StoredKey {
  readonly subject_id: string;
  readonly wrapped_key: Buffer | null;
  /** The id of the key-encryption key that wrapped it; null for a key stored before ids were recorded. */
  readonly wrapped_by: string | null;
}

interface Cached {
  readonly key: Buffer | null;
}

export interface PostgresDataKeysOptions {
  readonly databaseUrl: string;
  /** Wraps new keys under the ring's newest secret, opens stored ones under the one that wrapped them. */
  readonly cipher: KeyWrapping;
  /** Connections its pool may hold (`DATA_KEYS_POOL_MAX`); a read or create is one short statement. */
  readonly maximumPoolSize?: number;
  /** Keys kept in process (LRU). */
  readonly cacheSize?: number;
  /**
   * How long a kept key is believed: the bound on how long another process may still read what this one
   * erased (the erasing process forgets at once). A miss costs one indexed read per subject.
   */
  readonly cacheTtlMs?: number;
  readonly clock?: () => number;
  /**
   * Where else an erasure is told (Redis, where api processes with Redis hear checkpoints), after the
   * NOTIFY its own statement sends. A notice lost leaves other processes the cache's bound.
   */
  readonly announce?: (notice: string) => Promise<unknown>;
}

const STATEMENTS = {
  // The inserts and the reads in one round trip: the read sees the keys that existed before the statement,
  // the insert returns the ones it made; a subject whose key another creator is committing meanwhile is in
  // neither, and is asked again.
  create: {
    name: 'portcullis_data_key_create',
    text: `WITH created AS (
             INSERT INTO data_key (subject_id, wrapped_key, wrapped_by) SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[])
             ON CONFLICT (subject_id) DO NOTHING RETURNING subject_id, wrapped_key, wrapped_by)
           SELECT subject_id, wrapped_key, wrapped_by FROM created
           UNION ALL SELECT subject_id, wrapped_key, wrapped_by FROM data_key WHERE subject_id = ANY($1::text[])`,
  },
  read: { name: 'portcullis_data_key_read', text: 'SELECT subject_id, wrapped_key, wrapped_by FROM data_key WHERE subject_id = ANY($1::text[])' },
  // The address-naming key: made once, by whichever process comes first, and read back by every one.
  naming: {
    name: 'portcullis_data_key_naming',
    text: `WITH created AS (
             INSERT INTO data_key (subject_id, wrapped_key, wrapped_by) VALUES ($1, $2, $3)
             ON CONFLICT (subject_id) DO NOTHING RETURNING wrapped_key, wrapped_by)
           SELECT wrapped_key, wrapped_by FROM created
           UNION ALL SELECT wrapped_key, wrapped_by FROM data_key WHERE subject_id = $1`,
  },
  // Each with the NOTIFY of its erasure, sent at its commit.
  tombstone: {
    name: 'portcullis_data_key_tombstone',
    text: `WITH erased AS (
             INSERT INTO data_key (subject_id, wrapped_key, erased_at) SELECT unnest($1::text[]), NULL, now()
             ON CONFLICT (subject_id) DO UPDATE SET wrapped_key = NULL, erased_at = coalesce(data_key.erased_at, now()))
           SELECT pg_notify($2, $3)`,
  },
  remove: {
    name: 'portcullis_data_key_remove',
    text: 'WITH erased AS (DELETE FROM data_key WHERE subject_id = ANY($1::text[])) SELECT pg_notify($2, $3)',
  },
} as const;

/**
 * Data keys in Postgres with a bounded in-process cache: the append path (a sign-in's session, say) pays no
 * round trip for a subject whose key it holds. Its own small pool, like the event store's.
 */
export class PostgresDataKeys implements DataKeys {
  private readonly pool: pg.Pool;
  private readonly cache: LRUCache<string, Cached>;
  /** Keys being read or created for writing: the events of one append share the one round trip. */
  private readonly pending = new Map<string, Promise<Buffer | null>>();
  private readonly ttlMs: number;

  constructor(private readonly options: PostgresDataKeysOptions) {
    this.pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.maximumPoolSize ?? 4, connectionTimeoutMillis: 10_000, statement_timeout: 30_000 });
    this.pool.on('error', () => {});
    this.ttlMs = options.cacheTtlMs ?? 60_000;
    // A stale key stays kept (for writing, see `cached`); lru-cache's list does not slow down as entries come
    // and go, where a Map used as an LRU did: its first entry was found past every one deleted before it.
    this.cache = new LRUCache<string, Cached>({
      max: options.cacheSize ?? 50_000,
      ...(this.ttlMs > 0 ? { ttl: this.ttlMs } : {}),
      noDeleteOnStaleGet: true,
      // The clock asked on every read (lru-cache would otherwise reuse a reading for a millisecond).
      ttlResolution: 0,
      perf: { now: options.clock ?? Date.now },
    });
  }

  /**
   * A kept key, moved to the LRU's young end. Reading believes it only for `cacheTtlMs` after it was kept (not
   * at all with 0); writing for as long as it is kept, since encrypting under a key erased meanwhile only
   * erases what is written.
   */
  private cached(subjectId: string, use: 'reading' | 'writing'): Cached | undefined {
    if (use === 'reading') return this.ttlMs > 0 ? this.cache.get(subjectId) : undefined;
    return this.cache.get(subjectId, { allowStale: true });
  }

  private keep(subjectId: string, key: Buffer | null): void {
    this.cache.set(subjectId, { key });
  }

  /**
   * The stored key opened; null for an erased one. A key stored but not opened by this process's ring is a
   * ring that lacks a secret (one removed before `keys rotate`, or a process not yet given a new one), not
   * an erasure: it fails loudly, since answering null would write the erased marker into new events and
   * read models for a subject whose data is whole.
   */
  private open(row: StoredKey): Buffer | null {
    if (row.wrapped_key === null) return null;
    const key = this.options.cipher.unwrap(row.subject_id, row.wrapped_key, row.wrapped_by);
    if (!key) throw new KeyOutsideRingError(row.subject_id, row.wrapped_by);
    return key;
  }

  async keysForWriting(subjectIds: readonly string[]): Promise<ReadonlyMap<string, Buffer | null>> {
    const keys = new Map<string, Buffer | null>();
    const waiting: Array<Promise<void>> = [];
    const missing: string[] = [];
    for (const id of new Set(subjectIds)) {
      const entry = this.cached(id, 'writing');
      const pending = this.pending.get(id);
      if (entry?.key) keys.set(id, entry.key);
      else if (pending) waiting.push(pending.then((key) => void keys.set(id, key)));
      else missing.push(id);
    }
    if (missing.length > 0) {
      const created = this.createOrRead(missing);
      // A second append asking for one of these meanwhile waits for this round trip rather than making its own.
      for (const id of missing) {
        const pending = created.then((found) => found.get(id) ?? null).finally(() => this.pending.delete(id));
        this.pending.set(id, pending);
        waiting.push(pending.then((key) => void keys.set(id, key)));
      }
    }
    await Promise.all(waiting);
    return keys;
  }

  private async createOrRead(subjectIds: readonly string[]): Promise<ReadonlyMap<string, Buffer | null>> {
    const { cipher } = this.options;
    const keys = new Map<string, Buffer | null>();
    // In one order for every creator: two inserts of overlapping sets in opposite orders would each wait on
    // the other's uncommitted row.
    let asked = [...subjectIds].sort();
    for (let attempt = 0; attempt < 2 && asked.length > 0; attempt += 1) {
      const wrapped = asked.map((id) => cipher.wrap(id, cipher.newDataKey()));
      const { rows } = await this.pool.query<StoredKey>({
        ...STATEMENTS.create,
        values: [asked, wrapped.map((key) => key.bytes), wrapped.map((key) => key.wrappedBy)],
      });
      for (const row of rows) {
        const key = this.open(row);
        this.keep(row.subject_id, key);
        keys.set(row.subject_id, key);
      }
      asked = asked.filter((id) => !keys.has(id));
    }
    if (asked.length > 0) throw new Error('a data key was neither created nor found');
    return keys;
  }

  async keysForReading(subjectIds: readonly string[]): Promise<ReadonlyMap<string, Buffer | null>> {
    const keys = new Map<string, Buffer | null>();
    const missing: string[] = [];
    for (const id of new Set(subjectIds)) {
      const entry = this.cached(id, 'reading');
      if (entry) keys.set(id, entry.key);
      else missing.push(id);
    }
    if (missing.length > 0) {
      const rows = (await this.pool.query<StoredKey>({ ...STATEMENTS.read, values: [missing] })).rows;
      const found = new Map(rows.map((row) => [row.subject_id, row]));
      for (const id of missing) {
        const row = found.get(id);
        const key = row ? this.open(row) : null;
        keys.set(id, key);
        this.keep(id, key);
      }
    }
    return keys;
  }

  async erase(subjectIds: readonly string[]): Promise<void> {
    const users = subjectIds.filter((id) => id.startsWith('u:'));
    const others = subjectIds.filter((id) => !id.startsWith('u:'));
    // Addresses first: which addresses a user held is read under the user's key, so an erasure cut short
    // between the two statements can still be completed by running it again.
    if (others.length > 0) await this.pool.query({ ...STATEMENTS.remove, values: [others, CHECKPOINT_CHANNEL, keysErasedNotice(others)] });
    if (users.length > 0) await this.pool.query({ ...STATEMENTS.tombstone, values: [users, CHECKPOINT_CHANNEL, keysErasedNotice(users)] });
    this.forget(subjectIds);
    if (subjectIds.length > 0) await this.options.announce?.(keysErasedNotice(subjectIds)).catch(() => {});
  }

  /**
   * The key that names addresses in stream ids (see `PersonalDataCipher`): stored wrapped like a data key, so
   * it outlives the secret it was first derived from. On a database that has none yet, `derived` (the key as
   * it always was, from the ring's oldest secret) is stored.
   */
  async addressNamingKey(derived: Buffer): Promise<Buffer> {
    const wrapped = this.options.cipher.wrap(ADDRESS_NAMING_SUBJECT, derived);
    let row: Omit<StoredKey, 'subject_id'> | undefined;
    // A second statement when another process was committing the row meanwhile: the first one's read came
    // before that commit and its insert yielded to it, so it saw no row at all (as in createOrRead).
    for (let attempt = 0; attempt < 2 && !row; attempt += 1) {
      ({ rows: [row] } = await this.pool.query<Omit<StoredKey, 'subject_id'>>({ ...STATEMENTS.naming, values: [ADDRESS_NAMING_SUBJECT, wrapped.bytes, wrapped.wrappedBy] }));
    }
    if (!row) throw new Error(`the address-naming key (data_key '${ADDRESS_NAMING_SUBJECT}') was neither stored nor found`);
    const key = row.wrapped_key ? this.options.cipher.unwrap(ADDRESS_NAMING_SUBJECT, row.wrapped_key, row.wrapped_by) : null;
    if (!key) {
      throw new Error(
        `the address-naming key (data_key '${ADDRESS_NAMING_SUBJECT}') does not open under any secret of the ring: the secret that wraps it was removed before \`keys rotate\` re-wrapped it; put it back in AUTH_SECRETS`,
      );
    }
    return key;
  }

  forget(subjectIds: readonly string[]): void {
    for (const id of subjectIds) this.cache.delete(id);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
