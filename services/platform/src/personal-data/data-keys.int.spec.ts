import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventLogDatabase, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { createPersonalDataCipher } from '../crypto/personal-data-cipher.ts';
import { sql } from '../database/pool.ts';
import { CHECKPOINT_CHANNEL } from '../projection/postgres-target.ts';
import { KeyOutsideRingError, keysErasedIn, PostgresDataKeys } from './data-keys.ts';

const secret = 'data-keys-spec-secret-0123456789abcdefghij';

async function keyForWriting(keys: PostgresDataKeys, subjectId: string): Promise<Buffer | null> {
  return (await keys.keysForWriting([subjectId])).get(subjectId) ?? null;
}

/** The data keys on real Postgres: what erasing leaves, what a cache may still believe, and for how long. */
describe('data keys', () => {
  let db: EventLogDatabase;
  // A wall-clock time, as Date.now gives: lru-cache takes a kept time of 0 for none.
  let now = Date.parse('2026-01-01T00:00:00.000Z');
  let keys: PostgresDataKeys;
  let another: PostgresDataKeys;

  beforeAll(async () => {
    db = await createEventLogDatabase('data_keys');
    const cipher = createPersonalDataCipher(secret);
    keys = new PostgresDataKeys({ databaseUrl: db.url, cipher, cacheTtlMs: 1000, clock: () => now });
    another = new PostgresDataKeys({ databaseUrl: db.url, cipher, cacheTtlMs: 1000, clock: () => now });
  });

  afterAll(async () => {
    await keys?.close();
    await another?.close();
    await db?.close();
  });

  it('creates a key once, whoever asks first, and stores it only wrapped', async () => {
    const [a, b] = await Promise.all([keyForWriting(keys, 'u:one'), keyForWriting(another, 'u:one')]);
    expect(a).not.toBeNull();
    expect(a!.equals(b!)).toBe(true);
    const rows = await db.pool.any(sql.unsafe`SELECT wrapped_key FROM data_key WHERE subject_id = 'u:one'`);
    expect(rows).toHaveLength(1);
    expect((rows[0] as { wrapped_key: Buffer }).wrapped_key.includes(a!)).toBe(false);
  });

  it('creates the keys of many subjects in one go, agreeing with a creator racing for some of them', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => `u:batch-${i}`);
    const [mine, theirs] = await Promise.all([keys.keysForWriting(ids), another.keysForWriting(ids.slice(100).concat('u:batch-extra'))]);
    expect(mine.size).toBe(200);
    for (const id of ids.slice(100)) expect(mine.get(id)!.equals(theirs.get(id)!)).toBe(true);
    const stored = await db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM data_key WHERE subject_id LIKE 'u:batch-%'`);
    expect(stored).toBe(201);
    // Asked again, from what this process keeps: the same keys.
    const again = await keys.keysForWriting(ids.slice(0, 3));
    for (const id of ids.slice(0, 3)) expect(again.get(id)!.equals(mine.get(id)!)).toBe(true);
  });

  it('keeps an erased user\'s key a tombstone, so no later append gives them one again', async () => {
    await keyForWriting(keys, 'u:two');
    await another.keysForReading(['u:two']);
    await keys.erase(['u:two']);
    expect(await keyForWriting(keys, 'u:two')).toBeNull();
    expect((await keys.keysForReading(['u:two'])).get('u:two')).toBeNull();
    // Another process that hears no notice of it believes its kept key until the cache's bound, then reads the erasure.
    expect((await another.keysForReading(['u:two'])).get('u:two')).not.toBeNull();
    now += 1001;
    expect((await another.keysForReading(['u:two'])).get('u:two')).toBeNull();
  });

  it('tells an erasure where api processes hear checkpoints: a NOTIFY at its commit, and its announcer', async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query(`LISTEN ${CHECKPOINT_CHANNEL}`);
    const announced: string[] = [];
    const announcing = new PostgresDataKeys({ databaseUrl: db.url, cipher: createPersonalDataCipher(secret), announce: async (notice) => announced.push(notice) });
    try {
      await keyForWriting(announcing, 'u:told');
      await keyForWriting(announcing, 'a:told');
      await announcing.erase(['u:told', 'a:told']);
      await waitFor(() => heard.length >= 2, { timeoutMs: 5_000, message: 'the erasure notices' });
      expect(heard.map(keysErasedIn).sort()).toEqual([['a:told'], ['u:told']]);
      expect(announced.map(keysErasedIn)).toEqual([['u:told', 'a:told']]);
      expect(keysErasedIn('identity:42')).toBeNull();
    } finally {
      await announcing.close();
      await listener.end();
    }
  });

  it('drops an address\'s key, so the address starts afresh with a new one', async () => {
    const first = await keyForWriting(keys, 'a:feed');
    await keys.erase(['a:feed']);
    expect((await keys.keysForReading(['a:feed'])).get('a:feed')).toBeNull();
    const second = await keyForWriting(keys, 'a:feed');
    expect(second).not.toBeNull();
    expect(second!.equals(first!)).toBe(false);
  });

  it('refuses a key wrapped under a secret outside its ring, rather than take it for erased', async () => {
    await keyForWriting(keys, 'u:three');
    const elsewhere = new PostgresDataKeys({ databaseUrl: db.url, cipher: createPersonalDataCipher('another-secret-0123456789abcdefghijkl') });
    try {
      await expect(elsewhere.keysForReading(['u:three'])).rejects.toThrow(KeyOutsideRingError);
      await expect(elsewhere.keysForWriting(['u:three'])).rejects.toThrow(/not in this process's AUTH_SECRETS/);
    } finally {
      await elsewhere.close();
    }
  });
});
