import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createEventLogDatabase, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { sql } from '../database/pool.ts';
import { Chainer } from './chainer.ts';
import { canonicalJson, chainedEventText, ChainTable, exportChainHead, PostgresInTableChain, readChainTableHead } from './log-chain.ts';
import { PostgresEventStore } from './postgres.ts';
import type { StreamWrite } from './event-store.ts';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const trustedPublicKey = publicKey.export({ format: 'pem', type: 'spki' }).toString();
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

function write(streamId: string, names: readonly string[]): StreamWrite {
  return { streamId, expectedVersion: 'any', events: names.map((name) => ({ type: 'spec.happened.v1', data: { name, count: 1.5, nested: { zz: true, a: [1, 'x'] } }, metadata: metadataAt(new Date(), { actorId: 'u1' }) })) };
}

async function appendEvents(db: EventLogDatabase, count: number, prefix: string): Promise<void> {
  for (let i = 0; i < count; i += 2) await db.store.append([write(`spec-${i % 3}`, [`${prefix}${i}`, `${prefix}${i + 1}`].slice(0, Math.min(2, count - i)))]);
}

/** Tampering as someone with the database's credentials would: around the append-only trigger. */
async function tamper(db: EventLogDatabase, statement: ReturnType<typeof sql.unsafe>): Promise<void> {
  await db.pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`ALTER TABLE events DISABLE TRIGGER events_append_only`);
    await tx.query(statement);
    await tx.query(sql.unsafe`ALTER TABLE events ENABLE TRIGGER events_append_only`);
  });
}

/**
 * The chainer (what chains a KurrentDB log) run here against the Postgres log, through the port: no
 * KurrentDB server is at hand, and the chainer sees nothing of the engine but what the port returns.
 */
describe('the chainer and the chain table', () => {
  let db: EventLogDatabase | undefined;
  let stored: PostgresEventStore | undefined;
  const chainers: Chainer[] = [];
  afterEach(async () => {
    await Promise.all(chainers.splice(0).map((c) => c.stop()));
    await stored?.close();
    await db?.close();
    db = stored = undefined;
  });

  async function log(count: number): Promise<{ db: EventLogDatabase; store: PostgresEventStore; chain: ChainTable }> {
    db = await createEventLogDatabase('log_chain');
    // The log as stored: the chain covers what the engine holds, personal data sealed.
    stored = new PostgresEventStore({ databaseUrl: db.url, maximumPoolSize: 2 });
    await appendEvents(db, count, 'e');
    return { db, store: stored, chain: new ChainTable(db.pool, stored) };
  }

  function chainer(db: EventLogDatabase, store: PostgresEventStore, batchSize = 4): Chainer {
    const started = new Chainer({ store, pool: db.pool, databaseUrl: db.url, batchSize, pollIntervalMs: 20, standbyIntervalMs: 20, log: quiet });
    chainers.push(started);
    started.start();
    return started;
  }

  const chainedTo = async (db: EventLogDatabase, position: number): Promise<void> =>
    waitFor(async () => (await readChainTableHead(db.pool)).position === position, { timeoutMs: 20_000, message: `the chain to reach ${position}` });

  it("prints an event's JSON as Postgres's jsonb prints it, which is what the in-table chain hashes", async () => {
    const { db, store } = await log(4);
    for (const event of await store.readAll({ after: 0, limit: 10 })) {
      const text = await db.pool.oneFirst(sql.unsafe`
        SELECT jsonb_build_array(${event.position}::bigint, ${event.eventId}::text, ${event.streamId}::text, ${event.streamVersion}::int,
          ${event.type}::text, ${JSON.stringify(event.data)}::jsonb, ${JSON.stringify(event.metadata)}::jsonb, ${event.recordedAt.getTime()}::bigint)::text`);
      expect(chainedEventText(event)).toBe(text);
    }
    for (const value of [{ b: 1e21, a: [0.5, -3, 'é\n'], ab: { '': null } }, [123456789.125, 1e-7]]) {
      expect(canonicalJson(value)).toBe(await db.pool.oneFirst(sql.unsafe`SELECT ${JSON.stringify(value)}::jsonb::text`));
    }
  });

  it('chains the whole log, which then verifies, against a signed head too, and follows new appends', async () => {
    const { db, store, chain } = await log(10);
    chainer(db, store);
    await chainedTo(db, 10);
    expect(await chain.verify({ pageSize: 3 })).toMatchObject({ ok: true, checked: 10, verifiedTo: 10, failure: null });
    const signed = await exportChainHead(chain, privateKey);
    expect(signed).toMatchObject({ logId: await store.logId(), position: 10 });
    await appendEvents(db, 5, 'later');
    await chainedTo(db, 15);
    expect(await chain.verify({ signedHead: signed, trustedPublicKey })).toMatchObject({ ok: true, checked: 15, verifiedTo: 15 });
    expect(await chain.length()).toBe(15);
    // The two chains of one log are of the same kind and both hold: the in-table one is untouched.
    expect(await new PostgresInTableChain(db.pool).verify()).toMatchObject({ ok: true, checked: 15 });
  });

  it('finds an event changed in the database after the chainer passed it, and a tail cut off', async () => {
    const { db, store, chain } = await log(10);
    chainer(db, store);
    await chainedTo(db, 10);
    const signed = await exportChainHead(chain, privateKey);
    await Promise.all(chainers.splice(0).map((c) => c.stop()));

    await tamper(db, sql.unsafe`UPDATE events SET data = jsonb_set(data, '{name}', '"forged"') WHERE position = 6`);
    expect(await chain.verify({ pageSize: 4 })).toMatchObject({ ok: false, checked: 5, verifiedTo: 5, failure: { position: 6, problem: 'altered' } });

    await tamper(db, sql.unsafe`UPDATE events SET data = jsonb_set(data, '{name}', '"e5"') WHERE position = 6`);
    expect(await chain.verify()).toMatchObject({ ok: true });
    await tamper(db, sql.unsafe`DELETE FROM events WHERE position > 8`);
    expect(await chain.verify()).toMatchObject({ ok: false, verifiedTo: 8, failure: { position: 9, problem: 'missing' } });

    // A forger who also cuts the chain table back to match: the signed head still says where the log reached.
    await db.pool.query(sql.unsafe`DELETE FROM log_chain WHERE position > 8`);
    await db.pool.query(sql.unsafe`UPDATE log_chain_head SET position = 8, events = 8, hash = (SELECT hash FROM log_chain WHERE position = 8)`);
    expect(await chain.verify()).toMatchObject({ ok: true, checked: 8 });
    expect(await chain.verify({ signedHead: signed, trustedPublicKey })).toMatchObject({ ok: false, failure: { position: 10, problem: 'missing' } });
  });

  it("shows an event's link as each chain holds it: the same hashes, a changed event's link no longer verifying, none past the chainer", async () => {
    const { db, store, chain } = await log(6);
    const inTable = new PostgresInTableChain(db.pool);
    chainer(db, store);
    await chainedTo(db, 6);
    await Promise.all(chainers.splice(0).map((c) => c.stop()));
    // Each chain's own hashes (they differ: the in-table one hashes the instant to the microsecond).
    for (const each of [chain, inTable]) {
      const hashes = await each.hashesAt([6, 1, 3, 4, 99]);
      expect([...hashes.keys()].sort()).toEqual([1, 3, 4, 6]);
      expect(await each.linkAt(1)).toEqual({ previousPosition: 0, previousHash: '0'.repeat(64), hash: hashes.get(1), verifies: true });
      expect(await each.linkAt(4)).toEqual({ previousPosition: 3, previousHash: hashes.get(3), hash: hashes.get(4), verifies: true });
      expect(await each.linkAt(99)).toBeNull();
    }

    await tamper(db, sql.unsafe`UPDATE events SET data = jsonb_set(data, '{name}', '"forged"') WHERE position = 4`);
    expect(await chain.linkAt(4)).toMatchObject({ verifies: false });
    expect(await inTable.linkAt(4)).toMatchObject({ verifies: false });
    expect(await chain.linkAt(5)).toMatchObject({ verifies: true });

    // An event the chainer has not reached yet has no hash in the chain table.
    await appendEvents(db, 1, 'unchained');
    expect(await chain.hashesAt([7])).toEqual(new Map());
    expect(await chain.linkAt(7)).toMatchObject({ previousPosition: 6, hash: null, verifies: false });
  });

  it('resumes after a chainer stopped between batches, and after one killed, without a gap or a double', async () => {
    const { db, store, chain } = await log(9);
    const first = chainer(db, store, 2);
    await waitFor(async () => (await readChainTableHead(db.pool)).position >= 4, { timeoutMs: 20_000, message: 'a first batch' });
    await first.stop();
    const stoppedAt = (await readChainTableHead(db.pool)).position;
    expect(stoppedAt).toBeLessThan(10);
    await appendEvents(db, 3, 'meanwhile');

    const second = chainer(db, store, 2);
    await chainedTo(db, 12);
    // Killed: its lock connection ended by Postgres, as when its process dies; the next one takes over.
    await waitFor(() => second.isHolder, { timeoutMs: 10_000, message: 'the second chainer to hold' });
    const third = chainer(db, store, 2);
    await db.pool.query(sql.unsafe`
      SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
    await appendEvents(db, 4, 'after');
    await chainedTo(db, 16);
    expect(third.isHolder || second.isHolder).toBe(true);

    const rows = await db.pool.anyFirst(sql.unsafe`SELECT position::int FROM log_chain ORDER BY log_chain.position`);
    expect(rows).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(await chain.verify()).toMatchObject({ ok: true, checked: 16, verifiedTo: 16 });
  });

  it('has one holder among several chainers, and a standby takes over when it stops', async () => {
    const { db, store, chain } = await log(6);
    const a = chainer(db, store);
    const b = chainer(db, store);
    await chainedTo(db, 6);
    await waitFor(() => a.isHolder || b.isHolder, { timeoutMs: 10_000, message: 'a holder' });
    expect([a.isHolder, b.isHolder].filter(Boolean)).toHaveLength(1);
    const [holder, standby] = a.isHolder ? [a, b] : [b, a];
    await holder.stop();
    await appendEvents(db, 4, 'later');
    await chainedTo(db, 10);
    expect(standby.isHolder).toBe(true);
    expect(await chain.verify()).toMatchObject({ ok: true, checked: 10 });
  });
});
