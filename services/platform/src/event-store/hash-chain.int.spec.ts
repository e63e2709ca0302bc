import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { runner } from 'node-pg-migrate';
import { afterEach, describe, expect, it } from 'vitest';
import { createEventLogDatabase, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { createTestDatabase } from '../../../../tests/support/postgres.ts';
import { createDatabasePool, sql } from '../database/pool.ts';
import { migrate } from '../database/migrate.ts';
import { readLogHead, signHead, verifyChain, type ExportedHead } from './hash-chain.ts';
import { PostgresEventStore } from './postgres.ts';
import type { StreamWrite } from './event-store.ts';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const trustedPublicKey = publicKey.export({ format: 'pem', type: 'spki' }).toString();

function write(streamId: string, names: readonly string[]): StreamWrite {
  return { streamId, expectedVersion: 'any', events: names.map((name) => ({ type: 'spec.happened.v1', data: { name }, metadata: metadataAt(new Date(), { actorId: 'u1', ipAddress: '203.0.113.7' }) })) };
}

/** Ten events in four appends, one of two streams. */
async function tenEvents(db: EventLogDatabase): Promise<void> {
  await db.store.append([write('spec-a', ['a1', 'a2'])]);
  await db.store.append([write('spec-a', ['a3']), write('spec-b', ['b1', 'b2'])]);
  await db.store.append([write('spec-b', ['b3', 'b4'])]);
  await db.store.append([write('spec-a', ['a4', 'a5', 'a6'])]);
}

/** Tampering as someone with the database's credentials would: around the append-only trigger. */
async function tamper(db: EventLogDatabase, statement: ReturnType<typeof sql.unsafe>): Promise<void> {
  await db.pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`ALTER TABLE events DISABLE TRIGGER events_append_only`);
    await tx.query(statement);
    await tx.query(sql.unsafe`ALTER TABLE events ENABLE TRIGGER events_append_only`);
  });
}

/** A careful forger: recomputes every hash from `from` on, and the head row, as the append would. */
async function rechainFrom(db: EventLogDatabase, from: number): Promise<void> {
  await tamper(
    db,
    sql.unsafe`DO $$
      DECLARE chain bytea := coalesce((SELECT hash FROM events WHERE position = ${sql.literalValue(String(from - 1))}::bigint), decode(repeat('00', 32), 'hex'));
              r record;
      BEGIN
        FOR r IN SELECT * FROM events WHERE position >= ${sql.literalValue(String(from))}::bigint ORDER BY position LOOP
          chain := sha256(chain || convert_to(portcullis_event_canonical(r.position, r.event_id, r.stream_id, r.stream_version, r.type, r.data, r.metadata, r.recorded_at), 'UTF8'));
          UPDATE events SET hash = chain WHERE position = r.position;
        END LOOP;
        UPDATE event_log_head SET position = (SELECT max(position) FROM events), hash = chain;
      END $$`,
  );
}

describe('the hash chain of the log', () => {
  let db: EventLogDatabase | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  async function logOfTen(): Promise<{ db: EventLogDatabase; signed: ExportedHead }> {
    db = await createEventLogDatabase('hash_chain');
    await tenEvents(db);
    return { db, signed: signHead(await readLogHead(db.pool), privateKey) };
  }

  it('chains every append, concurrent ones included, in position order, and the head holds the last hash', async () => {
    db = await createEventLogDatabase('hash_chain');
    await tenEvents(db);
    await Promise.all(Array.from({ length: 20 }, (_, i) => db!.store.append([write(`spec-c${i % 3}`, [`c${i}`, `c${i}'`])])));
    const verdict = await verifyChain(db.pool, { pageSize: 7 });
    expect(verdict).toMatchObject({ ok: true, checked: 50, verifiedTo: 50, failure: null });
    const head = await readLogHead(db.pool);
    expect(head.position).toBe(50);
    expect(head.hash).toBe(String(await db.pool.oneFirst(sql.unsafe`SELECT encode(hash, 'hex') FROM events WHERE position = 50`)));
    // The recorded time is taken under the same lock: it never goes back as positions go up.
    const backwards = await db.pool.anyFirst(sql.unsafe`
      SELECT position FROM (SELECT position, recorded_at < lag(recorded_at) OVER (ORDER BY position) AS back FROM events) t WHERE back`);
    expect(backwards).toEqual([]);
  });

  it('reports an event whose data was changed in place at its position', async () => {
    const { db } = await logOfTen();
    await tamper(db, sql.unsafe`UPDATE events SET data = '{"name": "forged"}' WHERE position = 5`);
    expect((await verifyChain(db.pool)).failure).toEqual({ position: 5, problem: 'altered' });
  });

  it('reports a changed event at its position even when its own hash was recomputed (the next one no longer chains)', async () => {
    const { db } = await logOfTen();
    await tamper(db, sql.unsafe`UPDATE events SET metadata = metadata || '{"ipAddress": "198.51.100.1"}' WHERE position = 3`);
    await tamper(
      db,
      sql.unsafe`UPDATE events e SET hash = sha256(p.hash || convert_to(portcullis_event_canonical(e.position, e.event_id, e.stream_id, e.stream_version, e.type, e.data, e.metadata, e.recorded_at), 'UTF8'))
                 FROM events p WHERE p.position = 2 AND e.position = 3`,
    );
    expect((await verifyChain(db.pool)).failure).toEqual({ position: 4, problem: 'altered' });
  });

  it('reports a deleted event at its position', async () => {
    const { db } = await logOfTen();
    await tamper(db, sql.unsafe`DELETE FROM events WHERE position = 4`);
    expect((await verifyChain(db.pool)).failure).toEqual({ position: 4, problem: 'missing' });
  });

  it('reports a truncated tail at its first missing position: by the head row, and by a signed head when the head row was moved back too', async () => {
    const { db, signed } = await logOfTen();
    await tamper(db, sql.unsafe`DELETE FROM events WHERE position > 7`);
    expect((await verifyChain(db.pool)).failure).toEqual({ position: 8, problem: 'missing' });

    await db.pool.query(sql.unsafe`UPDATE event_log_head SET position = 7, hash = (SELECT hash FROM events WHERE position = 7)`);
    // A consistent shorter log: only a head exported before says what is gone.
    expect((await verifyChain(db.pool)).ok).toBe(true);
    expect((await verifyChain(db.pool, { signedHead: signed, trustedPublicKey })).failure).toEqual({ position: 8, problem: 'missing' });
  });

  it('detects a rewritten and re-hashed history against a signed head, and refuses a forged head', async () => {
    const { db, signed } = await logOfTen();
    expect(signed.signature).not.toBeNull();
    expect((await verifyChain(db.pool, { signedHead: signed, trustedPublicKey })).ok).toBe(true);

    await tamper(db, sql.unsafe`UPDATE events SET data = '{"name": "forged"}' WHERE position = 9`);
    await rechainFrom(db, 9);
    expect((await verifyChain(db.pool)).ok).toBe(true);
    expect((await verifyChain(db.pool, { signedHead: signed, trustedPublicKey })).failure).toEqual({ position: 10, problem: 'diverged' });

    const forged = { ...signed, hash: (await readLogHead(db.pool)).hash };
    expect((await verifyChain(db.pool, { signedHead: forged, trustedPublicKey })).failure).toEqual({ position: 10, problem: 'bad-signature' });
  });

  it('chains the events a log held before the chain existed, when the migration adds it', async () => {
    const test = await createTestDatabase('hash_chain_backfill');
    const migrationsDir = path.join(path.dirname(createRequire(import.meta.url).resolve('@portcullis/platform/package.json')), 'migrations');
    try {
      // Every migration before the chain's.
      await runner({ databaseUrl: test.url, dir: migrationsDir, direction: 'up', migrationsTable: 'schema_migrations', count: 9, log: () => {}, singleTransaction: true, checkOrder: true, verbose: false });
      // Appended as the adapter of that time did: its function took no count of appends under way (130).
      const pool = await createDatabasePool(test.url, { maximumPoolSize: 2 });
      const old = write('spec-old', ['o1', 'o2', 'o3']);
      const events = old.events.map((e) => ({ event_id: randomUUID(), stream_id: old.streamId, type: e.type, data: e.data, metadata: e.metadata }));
      await pool.query(
        sql.unsafe`SELECT portcullis_append(${JSON.stringify([{ stream_id: old.streamId, expected: 'any' }])}::jsonb, ${JSON.stringify(events)}::jsonb)`,
      );
      await migrate(test.url);
      const store = new PostgresEventStore({ databaseUrl: test.url });
      await store.append([write('spec-old', ['o4'])]);
      expect(await verifyChain(pool)).toMatchObject({ ok: true, checked: 4 });
      await store.close();
      await pool.end();
    } finally {
      await test.drop();
    }
  });
});
