import pg from 'pg';
import type { KeyWrapping } from '../crypto/personal-data-cipher.ts';

/** How far a re-wrap has got: keys looked at out of those not under the newest secret when it began. */
export interface RewrapProgress {
  readonly done: number;
  readonly total: number;
  /** Keys re-wrapped under the newest secret so far. */
  readonly rewrapped: number;
  /** Keys no secret of the ring opens (their secret was dropped): left as they are, named in the result. */
  readonly unreadable: number;
  readonly keysPerSecond: number;
}

export interface RewrapResult extends RewrapProgress {
  /** The subjects of the keys left unreadable (at most 20). */
  readonly unreadableSubjects: readonly string[];
}

type Queryable = Pick<pg.Pool, 'query'>;

/** A pool of its own (two connections) for the `keys` command: `rewrap` and `status` on the ring given. */
export class DataKeyRotation {
  private readonly pool: pg.Pool;

  constructor(
    databaseUrl: string,
    private readonly wrapping: KeyWrapping,
  ) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 2, application_name: `portcullis-keys pid ${process.pid}` });
    this.pool.on('error', () => {});
  }

  rewrap(options: Parameters<typeof rewrapDataKeys>[2] = {}): Promise<RewrapResult> {
    return rewrapDataKeys(this.pool, this.wrapping, options);
  }

  status(): Promise<WrappingStatus> {
    return dataKeyWrappingStatus(this.pool, this.wrapping);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

interface StoredRow {
  readonly subject_id: string;
  readonly wrapped_key: Buffer;
  readonly wrapped_by: string | null;
}

/**
 * Re-wraps every data key not wrapped by the ring's newest key-encryption key, in batches in subject order.
 * Each batch is one UPDATE (its own transaction, holding its rows' locks only while it runs) that changes a
 * row only if it still holds the bytes read: a key erased or re-wrapped meanwhile is left as it now is. The
 * data keys themselves never change, so a process reading a key wrapped either way gets the same key, and
 * keys kept in processes stay right. Killed midway, a rerun takes up what is still under an older secret.
 */
export async function rewrapDataKeys(
  pool: Queryable,
  wrapping: KeyWrapping,
  options: { readonly batchSize?: number; readonly onBatch?: (progress: RewrapProgress) => void } = {},
): Promise<RewrapResult> {
  const newest = wrapping.wrappingKeyIds[0]!;
  const batchSize = options.batchSize ?? 500;
  const startedAt = performance.now();
  const { rows: counted } = await pool.query<{ total: number }>(
    'SELECT count(*)::int AS total FROM data_key WHERE wrapped_key IS NOT NULL AND wrapped_by IS DISTINCT FROM $1',
    [newest],
  );
  const total = counted[0]?.total ?? 0;
  let after = '';
  let done = 0;
  let rewrapped = 0;
  const unreadableSubjects: string[] = [];
  let unreadable = 0;
  const progress = (): RewrapProgress => ({
    done,
    total: Math.max(total, done),
    rewrapped,
    unreadable,
    keysPerSecond: done / Math.max((performance.now() - startedAt) / 1000, 0.001),
  });
  for (;;) {
    const { rows } = await pool.query<StoredRow>(
      `SELECT subject_id, wrapped_key, wrapped_by FROM data_key
        WHERE subject_id > $1 AND wrapped_key IS NOT NULL AND wrapped_by IS DISTINCT FROM $2
        ORDER BY subject_id LIMIT $3`,
      [after, newest, batchSize],
    );
    if (rows.length === 0) break;
    after = rows.at(-1)!.subject_id;
    const ids: string[] = [];
    const before: Buffer[] = [];
    const now: Buffer[] = [];
    for (const row of rows) {
      const key = wrapping.unwrap(row.subject_id, row.wrapped_key, row.wrapped_by);
      if (!key) {
        unreadable += 1;
        if (unreadableSubjects.length < 20) unreadableSubjects.push(row.subject_id);
        continue;
      }
      ids.push(row.subject_id);
      before.push(row.wrapped_key);
      now.push(wrapping.wrap(row.subject_id, key).bytes);
    }
    if (ids.length > 0) {
      const { rowCount } = await pool.query(
        `UPDATE data_key d SET wrapped_key = n.wrapped, wrapped_by = $4
           FROM unnest($1::text[], $2::bytea[], $3::bytea[]) AS n(subject_id, before, wrapped)
          WHERE d.subject_id = n.subject_id AND d.wrapped_key = n.before`,
        [ids, before, now, newest],
      );
      rewrapped += rowCount ?? 0;
    }
    done += rows.length;
    options.onBatch?.(progress());
  }
  return { ...progress(), unreadableSubjects };
}

/** How many stored keys each key-encryption key wraps. */
export interface WrappingStatus {
  /** Per secret of the ring, newest first: its key's id and the keys it wraps. */
  readonly ring: ReadonlyArray<{ readonly wrappedBy: string; readonly keys: number }>;
  /** Keys stored before ids were recorded: opened by trying the ring, recorded by the next rotation. */
  readonly unrecorded: number;
  /** Keys wrapped by a secret no longer in the ring: unreadable unless it is put back. */
  readonly outsideRing: number;
}

export async function dataKeyWrappingStatus(pool: Queryable, wrapping: KeyWrapping): Promise<WrappingStatus> {
  const { rows } = await pool.query<{ wrapped_by: string | null; keys: number }>(
    'SELECT wrapped_by, count(*)::int AS keys FROM data_key WHERE wrapped_key IS NOT NULL GROUP BY wrapped_by',
  );
  const counts = new Map(rows.map((row) => [row.wrapped_by, row.keys]));
  const ring = wrapping.wrappingKeyIds.map((wrappedBy) => ({ wrappedBy, keys: counts.get(wrappedBy) ?? 0 }));
  const known = new Set<string | null>([...wrapping.wrappingKeyIds, null]);
  return {
    ring,
    unrecorded: counts.get(null) ?? 0,
    outsideRing: rows.filter((row) => !known.has(row.wrapped_by)).reduce((sum, row) => sum + row.keys, 0),
  };
}
