import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../tests/support/postgres.ts';
import { migrate, MIGRATIONS_TABLE } from '../database/migrate.ts';
import { createDatabasePool, sql, type DatabasePool } from '../database/pool.ts';
import { migrationsFolder } from '../installation.ts';
import { verifyChain } from './hash-chain.ts';

const CHAIN_STEP = '1732230000090_event-hash-chain.sql';
/** More than one of the migration's batches (10,000), and a last one part full. */
const EVENTS = 25_123;

/**
 * A log written before the hash chain, upgraded: migration 1732230000090 chains it in batches, and the
 * chain it draws is the one `audit verify` checks event by event, with every index back in place.
 */
describe('the hash chain drawn over an existing log', () => {
  let db: TestDatabase;
  let pool: DatabasePool;

  beforeAll(async () => {
    db = await createTestDatabase('hash_chain_upgrade');
    const steps = readdirSync(migrationsFolder(import.meta.url)).filter((file) => file.endsWith('.sql')).sort();
    await runner({
      databaseUrl: db.url,
      dir: migrationsFolder(import.meta.url),
      direction: 'up',
      migrationsTable: MIGRATIONS_TABLE,
      count: steps.indexOf(CHAIN_STEP),
      singleTransaction: true,
      checkOrder: true,
      log: () => {},
    });
    pool = await createDatabasePool(db.url, { maximumPoolSize: 2 });
    // Appended as the log of that schema did, a few events an append.
    for (let from = 0; from < EVENTS; from += 1000) {
      const count = Math.min(1000, EVENTS - from);
      const events = Array.from({ length: count }, (_, i) => ({
        event_id: randomUUID(),
        stream_id: `spec-${(from + i) % 97}`,
        type: 'spec.happened.v1',
        data: { n: from + i, text: `value ${from + i}` },
        metadata: { occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, from + i)).toISOString() },
      }));
      const writes = [...new Set(events.map((e) => e.stream_id))].map((streamId) => ({ stream_id: streamId, expected: 'any' }));
      await pool.query(sql.unsafe`SELECT portcullis_append(${JSON.stringify(writes)}::jsonb, ${JSON.stringify(events)}::jsonb)`);
    }
    await migrate(db.url);
  });

  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('chains every event in position order, verifiably, and leaves the indexes as they were', async () => {
    expect(await pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM events WHERE hash IS NOT NULL`)).toBe(EVENTS);
    expect(await verifyChain(pool)).toMatchObject({ ok: true, failure: null, checked: EVENTS });
    const indexes = await pool.anyFirst(sql.unsafe`SELECT indexname FROM pg_indexes WHERE tablename = 'events' ORDER BY indexname`);
    expect(indexes).toEqual(expect.arrayContaining(['events_event_id_key', 'events_pkey', 'events_stream_id_stream_version_key', 'events_type_position']));
    // The append-only trigger is back on.
    await expect(pool.query(sql.unsafe`UPDATE events SET type = 'x' WHERE position = 1`)).rejects.toThrow(/append-only/);
  });
});
