import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventLogDatabase, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { createPersonalDataCipher } from '../crypto/personal-data-cipher.ts';
import { sql } from '../database/pool.ts';
import { PostgresDataKeys } from './data-keys.ts';

const secret = 'data-keys-spec-secret-0123456789abcdefghij';

/** The data keys on real Postgres: what erasing leaves, what a cache may still believe, and for how long. */
describe('data keys', () => {
  let db: EventLogDatabase;
  let now = 0;
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
    const [a, b] = await Promise.all([keys.keyForWriting('u:one'), another.keyForWriting('u:one')]);
    expect(a).not.toBeNull();
    expect(a!.equals(b!)).toBe(true);
    const rows = await db.pool.any(sql.unsafe`SELECT wrapped_key FROM data_key WHERE subject_id = 'u:one'`);
    expect(rows).toHaveLength(1);
    expect((rows[0] as { wrapped_key: Buffer }).wrapped_key.includes(a!)).toBe(false);
  });

  it('keeps an erased user\'s key a tombstone, so no later append gives them one again', async () => {
    await keys.keyForWriting('u:two');
    await another.keysForReading(['u:two']);
    await keys.erase(['u:two']);
    expect(await keys.keyForWriting('u:two')).toBeNull();
    expect((await keys.keysForReading(['u:two'])).get('u:two')).toBeNull();
    // Another process believes its kept key until the cache's bound, then reads the erasure.
    expect((await another.keysForReading(['u:two'])).get('u:two')).not.toBeNull();
    now += 1001;
    expect((await another.keysForReading(['u:two'])).get('u:two')).toBeNull();
  });

  it('drops an address\'s key, so the address starts afresh with a new one', async () => {
    const first = await keys.keyForWriting('a:feed');
    await keys.erase(['a:feed']);
    expect((await keys.keysForReading(['a:feed'])).get('a:feed')).toBeNull();
    const second = await keys.keyForWriting('a:feed');
    expect(second).not.toBeNull();
    expect(second!.equals(first!)).toBe(false);
  });

  it('opens no key wrapped under another AUTH_SECRET', async () => {
    await keys.keyForWriting('u:three');
    const elsewhere = new PostgresDataKeys({ databaseUrl: db.url, cipher: createPersonalDataCipher('another-secret-0123456789abcdefghijkl') });
    try {
      expect((await elsewhere.keysForReading(['u:three'])).get('u:three')).toBeNull();
    } finally {
      await elsewhere.close();
    }
  });
});
