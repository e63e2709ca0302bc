import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventLogDatabase, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { createTestDatabase } from '../../../../tests/support/postgres.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { createKeyWrapping, derivedAddressNamingKey } from '../crypto/personal-data-cipher.ts';
import { migrate } from '../database/migrate.ts';
import { sql } from '../database/pool.ts';
import { ADDRESS_NAMING_SUBJECT, PostgresDataKeys } from './data-keys.ts';
import { DataKeyRotation, type RewrapProgress } from './rewrap.ts';

const A = 'rewrap-spec-secret-a-0123456789abcdefghij';
const B = 'rewrap-spec-secret-b-0123456789abcdefghij';
const C = 'rewrap-spec-secret-c-0123456789abcdefghij';

/** Re-wrapping the data keys under a new secret of the ring on real Postgres (`npm run keys -- rotate`). */
describe('data keys under a ring of secrets', () => {
  let db: EventLogDatabase;
  const opened: Array<{ close(): Promise<void> }> = [];
  const keysUnder = (ring: readonly string[]): PostgresDataKeys => {
    const keys = new PostgresDataKeys({ databaseUrl: db.url, cipher: createKeyWrapping(ring), cacheTtlMs: 0 });
    opened.push(keys);
    return keys;
  };
  const rotationUnder = (ring: readonly string[]): DataKeyRotation => {
    const rotation = new DataKeyRotation(db.url, createKeyWrapping(ring));
    opened.push(rotation);
    return rotation;
  };
  const subjects = Array.from({ length: 50 }, (_, i) => `u:ring-${String(i).padStart(2, '0')}`);
  let original: ReadonlyMap<string, Buffer | null>;

  beforeAll(async () => {
    db = await createEventLogDatabase('data_key_ring', { secret: A });
    original = await keysUnder([A]).keysForWriting(subjects);
  });

  afterAll(async () => {
    await Promise.all(opened.map((o) => o.close()));
    await db?.close();
  });

  const expectSameKeys = (read: ReadonlyMap<string, Buffer | null>) => {
    for (const id of subjects) expect(read.get(id)?.equals(original.get(id)!), id).toBe(true);
  };

  it('records which secret wrapped each key, and opens it under a ring that still holds that secret', async () => {
    const [aId] = createKeyWrapping([A]).wrappingKeyIds;
    const recorded = await db.pool.anyFirst(sql.unsafe`SELECT DISTINCT wrapped_by FROM data_key WHERE subject_id LIKE 'u:ring-%'`);
    expect(recorded).toEqual([aId]);
    expectSameKeys(await keysUnder([B, A]).keysForReading(subjects));
    // A new key under the ring B,A is wrapped by B.
    await keysUnder([B, A]).keysForWriting(['u:ring-new']);
    const [bId] = createKeyWrapping([B]).wrappingKeyIds;
    expect(await db.pool.oneFirst(sql.unsafe`SELECT wrapped_by FROM data_key WHERE subject_id = 'u:ring-new'`)).toBe(bId);
    await expect(keysUnder([A]).keysForReading(['u:ring-new'])).rejects.toThrow(/not in this process's AUTH_SECRETS/);
  });

  it('re-wraps every key not under the newest in batches, resumes after being stopped, and leaves erased keys erased', async () => {
    // Keys stored before ids were recorded, and an erased user, whose tombstone no rotation may fill.
    await db.pool.query(sql.unsafe`UPDATE data_key SET wrapped_by = NULL WHERE subject_id IN ('u:ring-00', 'u:ring-49')`);
    await keysUnder([A]).erase(['u:ring-01']);
    const rotation = rotationUnder([B, A]);
    expect(await rotation.status()).toMatchObject({ ring: [{ keys: 1 }, { keys: expect.any(Number) as number }], unrecorded: 2, outsideRing: 0 });

    // Stopped after its first batch, as a kill would: that batch is committed, the rest is not.
    const seen: RewrapProgress[] = [];
    await expect(
      rotation.rewrap({
        batchSize: 20,
        onBatch: (progress) => {
          seen.push(progress);
          throw new Error('killed');
        },
      }),
    ).rejects.toThrow('killed');
    expect(seen).toEqual([expect.objectContaining({ done: 20, rewrapped: 20 })]);
    const total = seen[0]!.total;

    const batches: RewrapProgress[] = [];
    const rest = await rotation.rewrap({ batchSize: 20, onBatch: (progress) => batches.push(progress) });
    expect(rest).toMatchObject({ done: total - 20, rewrapped: total - 20, unreadable: 0 });
    // A line per batch of at most 20, each saying how far it has got of the total it began with.
    expect(batches.map((b) => b.done)).toEqual(Array.from({ length: Math.ceil((total - 20) / 20) }, (_, i) => Math.min((i + 1) * 20, total - 20)));
    expect(batches.every((b) => b.total === total - 20)).toBe(true);
    expect(await rotation.rewrap()).toMatchObject({ done: 0, rewrapped: 0 });

    const status = await rotation.status();
    expect(status).toEqual({ ring: [{ wrappedBy: expect.any(String) as string, keys: total + 1 }, { wrappedBy: expect.any(String) as string, keys: 0 }], unrecorded: 0, outsideRing: 0 });
    // B alone opens every key as it was; A alone none; the erased one stays erased.
    const underB = await keysUnder([B]).keysForReading(subjects);
    expect(underB.get('u:ring-01')).toBeNull();
    expectSameKeys(new Map([...underB].filter(([id]) => id !== 'u:ring-01').concat([['u:ring-01', original.get('u:ring-01')!]])));
    await expect(keysUnder([A]).keysForReading(subjects.slice(2))).rejects.toThrow(/not in this process's AUTH_SECRETS/);
  });

  it('counts what no secret of the ring opens and leaves it as it is', async () => {
    const rotation = rotationUnder([C]);
    const result = await rotation.rewrap();
    expect(result.unreadable).toBeGreaterThan(0);
    expect(result.rewrapped).toBe(0);
    expect(result.unreadableSubjects).toContain('u:ring-00');
    expect((await rotation.status()).outsideRing).toBe(result.unreadable);
    expect((await keysUnder([B]).keysForReading(['u:ring-00'])).get('u:ring-00')?.equals(original.get('u:ring-00')!)).toBe(true);
  });

  it('keeps the address-naming key as first derived, through a rotation and the old secret dropped', async () => {
    // Stored by the first process on this database (ring A), and re-wrapped under B by the rotation above.
    const first = derivedAddressNamingKey([A]);
    expect((await keysUnder([C, B]).addressNamingKey(derivedAddressNamingKey([C, B]))).equals(first)).toBe(true);
    await rotationUnder([C, B]).rewrap();
    expect((await keysUnder([C]).addressNamingKey(derivedAddressNamingKey([C]))).equals(first)).toBe(true);
    await expect(keysUnder([B]).addressNamingKey(derivedAddressNamingKey([B]))).rejects.toThrow(/put it back in AUTH_SECRETS/);
  });
});

describe('the address-naming key on a database no process has started on', () => {
  it('is read back by a process whose insert waited on another process storing it', async () => {
    const db = await createTestDatabase('naming_key_race');
    const wrapping = createKeyWrapping([A]);
    const keys = new PostgresDataKeys({ databaseUrl: db.url, cipher: wrapping });
    const first = new pg.Client({ connectionString: db.url });
    try {
      await migrate(db.url);
      await first.connect();
      // Another process is storing it: its insert is not committed yet.
      const stored = wrapping.wrap(ADDRESS_NAMING_SUBJECT, derivedAddressNamingKey([A]));
      await first.query('BEGIN');
      await first.query('INSERT INTO data_key (subject_id, wrapped_key, wrapped_by) VALUES ($1, $2, $3)', [ADDRESS_NAMING_SUBJECT, stored.bytes, stored.wrappedBy]);
      const read = keys.addressNamingKey(derivedAddressNamingKey([A]));
      await waitFor(
        async () => {
          // Within a transaction the activity view is read once; cleared, it is read afresh.
          await first.query('SELECT pg_stat_clear_snapshot()');
          return (await first.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rowCount === 1;
        },
        { timeoutMs: 10_000, message: 'the second insert to wait on the first' },
      );
      await first.query('COMMIT');
      expect((await read).equals(derivedAddressNamingKey([A]))).toBe(true);
    } finally {
      await first.end();
      await keys.close();
      await db.drop();
    }
  });
});
