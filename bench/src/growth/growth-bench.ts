import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { streamModel, streams, UserDeleted, UserRegistered, UserUpdated, type DomainEvent } from '@portcullis/contracts';
import { createDatabasePool, loadStream, migrate, PostgresEventStore, protectPersonalData, SNAPSHOT_INTERVAL } from '@portcullis/platform';
import { createBenchDatabase } from '../lib/database.ts';
import { log } from '../lib/progress.ts';
import { formatMs, markdownTable } from '../lib/report.ts';
import type { Teardown } from '../lib/teardown.ts';
import { settings } from '../settings.ts';
import { firstFoldFigures } from './first-fold.ts';

const SECRET = 'bench-growth-secret-0123456789abcdefghijkl';

/** How migration 1732230000090 chained an existing log before issue 46: a statement per event. */
const ROW_BY_ROW_CHAIN = `
ALTER TABLE events DISABLE TRIGGER events_append_only;
DO $$
DECLARE
  chain bytea := decode(repeat('00', 32), 'hex');
  r record;
BEGIN
  FOR r IN SELECT position, event_id, stream_id, stream_version, type, data, metadata, recorded_at FROM events ORDER BY position LOOP
    chain := sha256(chain || convert_to(portcullis_event_canonical(
      r.position, r.event_id, r.stream_id, r.stream_version, r.type, r.data, r.metadata, r.recorded_at), 'UTF8'));
    UPDATE events SET hash = chain WHERE position = r.position;
  END LOOP;
  UPDATE event_log_head SET hash = chain;
END $$;
ALTER TABLE events ENABLE TRIGGER events_append_only;`;

/** How it chains one now: its own text, from disabling the append-only trigger to enabling it again. */
function batchedChain(): string {
  const migration = readFileSync(new URL('../../../services/platform/migrations/1732230000090_event-hash-chain.sql', import.meta.url), 'utf8');
  const start = migration.indexOf('ALTER TABLE events DISABLE TRIGGER events_append_only;');
  const endMarker = 'ALTER TABLE events ENABLE TRIGGER events_append_only;';
  const end = migration.indexOf(endMarker, start);
  if (start < 0 || end < 0) throw new Error('migration 1732230000090 no longer fills the chain between its trigger statements');
  return migration.slice(start, end + endMarker.length);
}

/** A fold keeping personal values as deciders' states do; the erased user's snapshot is one of it. */
const profileModel = streamModel<{ email: string | null; names: string[] }>('bench-profile', 1, () => ({ email: null, names: [] }), (state, event: DomainEvent) => {
  if (event.type === 'user.registered.v1') return { email: event.data.email, names: [event.data.name] };
  if (event.type === 'user.updated.v1' && event.data.name) return { ...state, names: [...state.names, event.data.name] };
  return state;
});

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function timed<T>(run: () => Promise<T>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** The plan's scan of "user" (or snapshots): the index it reads, or a sequential scan. */
async function scanOf(client: pg.Client, text: string, values: readonly unknown[]): Promise<string> {
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, [...values]);
  const lines = rows.map((row) => row['QUERY PLAN']);
  const index = lines.map((line) => /Bitmap Index Scan on (\w+)|Index Scan using (\w+)/.exec(line)).find((match) => match);
  if (index) return `index ${index[1] ?? index[2]}`;
  return lines.some((line) => line.includes('Seq Scan')) ? 'sequential scan' : lines[0]!.trim();
}

/**
 * What grows with the data (issue 46), at ten times the sizes the other groups use: the first command on a
 * session stream of BENCH_GROWTH_STREAM events without a snapshot (before and after the background
 * snapshotter), a user's erasure beside BENCH_GROWTH_SNAPSHOTS snapshots (the text scan it ran before, and
 * what it runs now), and list-users' contains search on BENCH_GROWTH_USERS users without and with the
 * trigram indexes. Straight on Postgres (the statements the api runs), no servers.
 */
export async function runGrowth(teardown: Teardown): Promise<string> {
  const db = await createBenchDatabase(settings.adminUrl);
  teardown.add('drop the growth database', () => db.drop());
  await migrate(db.url);
  const pool = await createDatabasePool(db.url, { maximumPoolSize: 4 });
  teardown.add('close the growth pool', () => pool.end());
  const inner = new PostgresEventStore({ databaseUrl: db.url });
  const protectedLog = await protectPersonalData(inner, { databaseUrl: db.url, secrets: SECRET, pool });
  teardown.add('close the growth log', async () => {
    await protectedLog.store.close();
    await protectedLog.close();
  });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  teardown.add('close the growth client', () => client.end());
  const counter = new pg.Client({ connectionString: db.url });
  await counter.connect();
  teardown.add('close the growth counter', () => counter.end());
  const out: string[] = ['## growth (issue 46)', ''];

  // The first command on a long stream without a snapshot, on a log of its own (the chain's figure below
  // is of a log of BENCH_GROWTH_EVENTS).
  out.push(...(await firstFoldFigures(teardown, settings.growthStream)));

  // Erasure beside many snapshots.
  const snapshots = settings.growthSnapshots;
  log(`growth: ${snapshots} snapshots`);
  await client.query(`
    INSERT INTO snapshots (stream_id, model, version, state)
    SELECT 'user-filler-' || i, 'bench-profile@1+sealed', 70,
           jsonb_build_object('email', 'pd1.' || md5(i::text) || md5((i + 1)::text), 'names',
             jsonb_build_array('pd1.' || md5((i + 2)::text) || md5((i + 3)::text), 'pd1.' || md5((i + 4)::text) || md5((i + 5)::text)))
    FROM generate_series(1, ${snapshots}) AS i`);
  await client.query('ANALYZE snapshots');
  const userId = 'growth-erased';
  const email = 'growth-erased@example.com';
  const history = [UserRegistered({ userId, email, name: 'Erased 0', image: null, emailVerified: false }), ...Array.from({ length: SNAPSHOT_INTERVAL + 5 }, (_, i) => UserUpdated({ userId, name: `Erased ${i + 1}` }))];
  const metadata = { occurredAt: new Date().toISOString() };
  await protectedLog.store.append([{ streamId: streams.user(userId), expectedVersion: 'no_stream', events: history.map((e) => ({ ...e, metadata })) }]);
  await loadStream(protectedLog.store, streams.user(userId), profileModel);
  for (let i = 0; i < 100; i += 1) {
    const { rows } = await client.query(`SELECT 1 FROM snapshots WHERE stream_id = $1`, [streams.user(userId)]);
    if (rows.length > 0) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  // What the erasure ran before issue 46, in a transaction rolled back: one text scan of every snapshot.
  const needles = [userId, email].map((needle) => `%${needle.toLowerCase()}%`);
  const scans: number[] = [];
  for (let run = 0; run < 3; run += 1) {
    scans.push(
      await timed(async () => {
        await client.query('BEGIN');
        await client.query('DELETE FROM snapshots WHERE lower(state::text) LIKE ANY ($1)', [needles]);
        await client.query('ROLLBACK');
      }),
    );
  }
  scans.sort((a, b) => a - b);
  const erasure = await timed(() =>
    protectedLog.store.append([{ streamId: streams.user(userId), expectedVersion: history.length, events: [{ ...UserDeleted({ userId, email }), metadata }] }]),
  );
  const kept = (await client.query<{ count: string }>(`SELECT count(*) FROM snapshots`)).rows[0]!.count;
  out.push(
    `Erasing a user beside ${snapshots.toLocaleString('en')} snapshots (${Number(kept).toLocaleString('en')} kept after it):`,
    '',
    markdownTable(
      ['erasure', 'ms', 'snapshots read'],
      [
        ['before: the text scan alone (median of 3)', formatMs(quantile(scans, 0.5)), snapshots.toLocaleString('en')],
        ['after: the whole deletion (append, erasure, keys)', formatMs(erasure), '0'],
      ],
      new Set([1, 2]),
    ),
    '',
  );

  // list-users contains search.
  const users = settings.growthUsers;
  log(`growth: ${users} users`);
  await client.query('DROP INDEX user_email_trigram, user_name_trigram');
  await client.query(`
    INSERT INTO "user" (id, name, email, "createdAt", "updatedAt")
    SELECT 'u' || i, 'Person ' || md5(i::text), 'person-' || md5(i::text) || '@example.com', now() - i * interval '1 second', now()
    FROM generate_series(1, ${users}) AS i`);
  await client.query('ANALYZE "user"');
  // The statements list-users runs for `searchField=email&searchOperator=contains` (services/api/src/admin/user-list.ts).
  const pageStatement = 'SELECT id, email, name FROM "user" WHERE email LIKE $1 ORDER BY "createdAt" ASC, id ASC LIMIT 100';
  const countStatement = 'SELECT count(*)::int FROM "user" WHERE email LIKE $1';
  const needle = () => {
    const i = 1 + Math.floor(Math.random() * users);
    return `%${createHash('md5').update(String(i)).digest('hex').slice(10, 17)}%`;
  };
  const measure = async (): Promise<{ p50: number; p99: number; pageScan: string; countScan: string }> => {
    const times: number[] = [];
    for (let q = 0; q < settings.growthQueries; q += 1) {
      const value = needle();
      // On two connections at once, as the api sends them.
      times.push(await timed(() => Promise.all([client.query(pageStatement, [value]), counter.query(countStatement, [value])])));
    }
    times.sort((a, b) => a - b);
    const value = needle();
    return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), pageScan: await scanOf(client, pageStatement, [value]), countScan: await scanOf(client, countStatement, [value]) };
  };
  const before = await measure();
  const build = await timed(async () => {
    await client.query('CREATE INDEX user_email_trigram ON "user" USING gin (email gin_trgm_ops)');
    await client.query('CREATE INDEX user_name_trigram ON "user" USING gin (name gin_trgm_ops)');
  });
  await client.query('ANALYZE "user"');
  const after = await measure();
  out.push(
    `list-users, email contains 7 characters, a page of 100 and its total, on ${users.toLocaleString('en')} users (${settings.growthQueries} searches each; the two indexes built in ${formatMs(build / 1000)} s):`,
    '',
    markdownTable(
      ['', 'p50 ms', 'p99 ms', 'the page reads', 'the total reads'],
      [
        ['before: no trigram index', formatMs(before.p50), formatMs(before.p99), before.pageScan, before.countScan],
        ['after: migration 1732230000310', formatMs(after.p50), formatMs(after.p99), after.pageScan, after.countScan],
      ],
      new Set([1, 2]),
    ),
    '',
  );
  // The hash chain's fill of a log written before it (migration 1732230000090), old and new, each rolled back.
  const events = settings.growthEvents;
  log(`growth: ${events} events`);
  await client.query('ALTER TABLE events DISABLE TRIGGER events_append_only');
  await client.query(`
    INSERT INTO events (position, event_id, stream_id, stream_version, type, data, metadata, hash)
    SELECT position, gen_random_uuid(), 'user-filler-' || (position / 10), position % 10 + 1, 'user.updated.v1',
           jsonb_build_object('userId', 'filler-' || (position / 10), 'name', 'pd1.' || md5(position::text) || md5((position + 1)::text)),
           jsonb_build_object('occurredAt', now()::text, 'ipAddress', 'pd1.' || md5(position::text)), '\\x00'
    FROM generate_series((SELECT position FROM event_log_head) + 1, (SELECT position FROM event_log_head) + ${events}) AS position`);
  await client.query('UPDATE event_log_head SET position = (SELECT max(position) FROM events)');
  await client.query('ALTER TABLE events ENABLE TRIGGER events_append_only');
  await client.query('VACUUM ANALYZE events');
  const fill = async (statements: string): Promise<{ ms: number; head: string }> => {
    await client.query('BEGIN');
    try {
      const ms = await timed(() => client.query(statements));
      const head = (await client.query<{ hash: string }>(`SELECT encode(hash, 'hex') AS hash FROM event_log_head`)).rows[0]!.hash;
      return { ms, head };
    } finally {
      await client.query('ROLLBACK');
    }
  };
  const rowByRow = await fill(ROW_BY_ROW_CHAIN);
  const batched = await fill(batchedChain());
  const total = (await client.query<{ count: string }>('SELECT count(*) FROM events')).rows[0]!.count;
  out.push(
    `Chaining a log of ${Number(total).toLocaleString('en')} events written before the hash chain (migration 1732230000090), in a transaction rolled back:`,
    '',
    markdownTable(
      ['fill', 's', 'events/s', 'head hash'],
      [
        ['before: a statement per event', formatMs(rowByRow.ms / 1000), Math.round(Number(total) / (rowByRow.ms / 1000)).toLocaleString('en'), rowByRow.head.slice(0, 12)],
        ['after: batches of 10,000, indexes built after', formatMs(batched.ms / 1000), Math.round(Number(total) / (batched.ms / 1000)).toLocaleString('en'), batched.head.slice(0, 12)],
      ],
      new Set([1, 2]),
    ),
    '',
  );
  return out.join('\n');
}
