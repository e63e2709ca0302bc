import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECTION_REBUILD_CHANNEL, UserRegistered } from '@portcullis/contracts';
import { loadConfig, NotificationListener, PostgresProjectionTarget, ProjectionRunner, sql } from '@portcullis/platform';
import { createEventLogDatabase, domainWrite, metadataAt, TEST_AUTH_SECRET, type EventLogDatabase } from '../../../tests/support/event-log.ts';
import { waitFor } from '../../../tests/support/processes.ts';
import { identityProjection } from './identity/identity.projection.ts';
import { organizationsProjection } from './organization/organizations.projection.ts';
import { RebuildRequests, rebuildLockKey } from './rebuild-requests.ts';

const silent = { info() {}, warn() {}, error() {} };

interface RebuildRow {
  status: string;
  worker: string | null;
  position: string;
  head: string | null;
  error: string | null;
}

/**
 * The projector's side of rebuilds asked for over HTTP: it claims a request under the projection's rebuild
 * lock, replays beside the served read model while the live runner keeps it, swaps the copy in and records
 * the end; it takes over a rebuild whose process died, and leaves one whose process lives alone.
 */
describe('rebuild requests', () => {
  let db: EventLogDatabase;
  let notifications: NotificationListener;
  let requests: RebuildRequests;
  let runner: ProjectionRunner;
  const users: string[] = [];

  async function request(projection: string, status = 'requested', worker: string | null = null): Promise<string> {
    const id = randomUUID();
    await db.pool.query(sql.unsafe`INSERT INTO projection_rebuilds (id, projection, status, worker) VALUES (${id}, ${projection}, ${status}, ${worker})`);
    await db.pool.query(sql.unsafe`SELECT pg_notify(${PROJECTION_REBUILD_CHANNEL}, ${projection})`);
    return id;
  }

  async function rebuild(id: string): Promise<RebuildRow> {
    return (await db.pool.one(sql.unsafe`SELECT status, worker, position::text, head::text, error FROM projection_rebuilds WHERE id = ${id}`)) as RebuildRow;
  }

  async function ended(id: string): Promise<RebuildRow> {
    await waitFor(async () => ['succeeded', 'failed'].includes((await rebuild(id)).status), { timeoutMs: 30_000, message: `rebuild ${id} to end` });
    return rebuild(id);
  }

  beforeAll(async () => {
    db = await createEventLogDatabase('rebuild_requests');
    for (let i = 0; i < 40; i++) {
      const userId = randomUUID();
      users.push(userId);
      await db.store.append([
        domainWrite(`user-${userId}`, 'no_stream', [UserRegistered({ userId, email: `rebuilt-${i}@example.test`, name: `User ${i}`, image: null, emailVerified: false })], metadataAt(new Date())),
      ]);
    }
    const config = loadConfig({ DATABASE_URL: db.url, AUTH_SECRET: TEST_AUTH_SECRET, LOG_LEVEL: 'silent' });
    // The live identity projection keeps running: the rebuild asks it to step aside only for the swap.
    runner = new ProjectionRunner({ store: db.store, target: new PostgresProjectionTarget(db.pool, identityProjection), databaseUrl: db.url, control: db.control, batchSize: 100, pollIntervalMs: 100, log: silent });
    runner.start();
    notifications = new NotificationListener(db.url);
    await notifications.start();
    requests = new RebuildRequests({
      pool: db.pool,
      databaseUrl: db.url,
      store: db.store,
      targets: [new PostgresProjectionTarget(db.pool, identityProjection), new PostgresProjectionTarget(db.pool, organizationsProjection)],
      batchSize: 7,
      notifications,
      log: silent,
      sweepIntervalMs: 200,
      leaseMs: config.projector.leaseMs,
    });
    await requests.start();
  });

  afterAll(async () => {
    await requests?.stop();
    await runner?.stop();
    await notifications?.close();
    await db?.close();
  });

  it('claims a request, rebuilds beside the served read model, swaps it in and records the end', async () => {
    const head = await db.store.headPosition();
    const id = await request('identity');
    const done = await ended(id);
    expect(done).toMatchObject({ status: 'succeeded', error: null, position: String(head), head: String(head) });
    expect(done.worker).toMatch(/:\d+$/);
    // The swapped-in copy holds every user, and the live runner follows the log on it.
    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM "user" WHERE id = ANY(${sql.array(users, 'text')})`))).toBe(users.length);
    const late = randomUUID();
    await db.store.append([domainWrite(`user-${late}`, 'no_stream', [UserRegistered({ userId: late, email: 'late@example.test', name: 'Late', image: null, emailVerified: false })], metadataAt(new Date()))]);
    await waitFor(async () => (await db.pool.maybeOneFirst(sql.unsafe`SELECT id FROM "user" WHERE id = ${late}`)) !== null, { timeoutMs: 10_000, message: 'the live projection to go on after the swap' });
  });

  it('takes over a rebuild whose process died (its lock free), and leaves one whose process holds its lock', async () => {
    const orphan = await request('organizations', 'running', 'gone-host:1');
    expect(await ended(orphan)).toMatchObject({ status: 'succeeded' });
    expect((await rebuild(orphan)).worker).not.toBe('gone-host:1');

    // Another process runs this one: it holds the rebuild lock.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [rebuildLockKey('identity')]);
      const held = await request('identity', 'running', 'other-host:2');
      // Several sweeps pass (each notice, and the 200 ms timer) without touching it.
      await request('organizations');
      await waitFor(async () => Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM projection_rebuilds WHERE projection = 'organizations' AND status = 'succeeded'`)) === 2, {
        timeoutMs: 30_000,
        message: 'the second organizations rebuild',
      });
      expect(await rebuild(held)).toMatchObject({ status: 'running', worker: 'other-host:2' });
      // Its process gone, the lock is free, and the rebuild is taken over.
      await holder.end();
      expect(await ended(held)).toMatchObject({ status: 'succeeded' });
    } finally {
      await holder.end().catch(() => {});
    }
  });
});
