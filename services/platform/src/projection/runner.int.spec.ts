import pg from 'pg';
import { UniqueIntegrityConstraintViolationError, type DatabasePoolConnection } from 'slonik';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { SignInFailed, streams, UsernameSignInFailed } from '@portcullis/contracts';
import { createEventLogDatabase, domainWrite, metadataAt, toProjected, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { PostgresEventStore } from '../event-store/postgres.ts';
import { sql, type DatabasePool } from '../database/pool.ts';
import { hurryRequest, PROJECTION_CONTROL_CHANNEL } from './control.ts';
import { CHECKPOINT_CHANNEL, checkpointNotice, PostgresProjectionTarget } from './postgres-target.ts';
import { CheckpointFencedError, type PostgresProjection, type ProjectedEvent, type ProjectionTarget } from './projection.ts';
import { resetProjection } from './rebuild.ts';
import { ProjectionRunner, projectionLockKey, type RunnerLogger } from './runner.ts';

const PROJECTION = 'runner-spec';

/**
 * Records every application of every event, with who applied it. The table has no unique key on purpose:
 * an event applied twice shows up as two rows instead of failing the second batch.
 */
function recordingProjection(appliedBy: string): PostgresProjection {
  return {
    name: PROJECTION,
    tables: ['applied_event'],
    async apply(tx, { recorded }) {
      await tx.query(sql.unsafe`
        INSERT INTO applied_event (position, event_id, applied_by) VALUES (${recorded.position}, ${recorded.eventId}, ${appliedBy})`);
    },
  };
}

/** LISTENs on the checkpoint channel until the test ends, pushing each notice's payload onto `heard`. */
async function hearCheckpointNotices(databaseUrl: string, heard: string[]): Promise<void> {
  const listener = new pg.Client({ connectionString: databaseUrl });
  listener.on('error', () => {});
  onTestFinished(() => listener.end().catch(() => {}));
  await listener.connect();
  listener.on('notification', (message) => heard.push(message.payload ?? ''));
  await listener.query(`LISTEN ${CHECKPOINT_CHANNEL}`);
}

const quietLog: RunnerLogger = { info: () => {}, warn: () => {}, error: () => {} };

describe('ProjectionRunner: one holder per projection, standby takeover', () => {
  let db: EventLogDatabase;
  const runners: ProjectionRunner[] = [];
  let appended = 0;

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_runner');
    await db.pool.query(sql.unsafe`
      CREATE TABLE applied_event (position bigint NOT NULL, event_id uuid NOT NULL, applied_by text NOT NULL)`);
  });

  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
    await db?.close();
  });

  function startRunner(label: string): ProjectionRunner {
    const runner = new ProjectionRunner({
      store: db.store,
      target: new PostgresProjectionTarget(db.pool, recordingProjection(label)),
      databaseUrl: db.url,
      control: db.control,
      // Small batches so a takeover lands between batches of one catch-up, not after it.
      batchSize: 15,
      pollIntervalMs: 200,
      standbyIntervalMs: 100,
      log: quietLog,
    });
    runners.push(runner);
    runner.start();
    return runner;
  }

  async function appendEvents(count: number): Promise<void> {
    for (let i = 0; i < count; i += 5) {
      const email = `user${(appended + i) % 17}@example.test`;
      const events = Array.from({ length: Math.min(5, count - i) }, () => SignInFailed({ email, userId: null, reason: 'user_not_found' }));
      await db.store.append([domainWrite(streams.signIn(email), 'any', events, metadataAt(new Date()))]);
    }
    appended += count;
  }

  async function checkpoint(): Promise<number> {
    return Number((await db.pool.maybeOneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${PROJECTION}`)) ?? 0);
  }

  async function caughtUp(message: string): Promise<void> {
    const head = await db.store.headPosition();
    await waitFor(async () => (await checkpoint()) === head, { timeoutMs: 20_000, message: `${message} (head ${head})` });
  }

  async function lockHolders(): Promise<number[]> {
    // pg_locks shows a bigint advisory key as its two 32-bit halves (objsubid 1 marks the bigint form).
    const rows = await db.pool.any(sql.unsafe`
      SELECT l.pid FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.objsubid = 1
        AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(${projectionLockKey(PROJECTION)}, 0)`);
    return (rows as readonly { pid: number }[]).map((r) => Number(r.pid));
  }

  function holders(): ProjectionRunner[] {
    return runners.filter((r) => r.isHolder);
  }

  it('gives the projection to exactly one runner; the other stands by', async () => {
    const [a, b] = [startRunner('A'), startRunner('B')];
    await waitFor(() => holders().length === 1, { timeoutMs: 10_000, message: 'one runner to take the projection' });
    await appendEvents(120);
    await caughtUp('the holder to apply the first events');

    expect(holders()).toHaveLength(1);
    expect(await lockHolders()).toHaveLength(1);
    const holder = holders()[0]!;
    const label = holder === a ? 'A' : 'B';
    expect([a, b]).toContain(holder);
    // Only the holder applied anything.
    const appliers = await db.pool.anyFirst(sql.unsafe`SELECT DISTINCT applied_by FROM applied_event`);
    expect(appliers).toEqual([label]);
  });

  it('lets the standby try for the lock on one connection it keeps, not a new one each time', async () => {
    // A connection shows the last statement it ran while it sits idle: the standby's, between its tries.
    const seen: string[] = [];
    // Ten of its tries at least (every 100 ms, jittered).
    for (const until = Date.now() + 1500; Date.now() < until; ) {
      const pids = await db.pool.anyFirst(sql.unsafe`
        SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_try_advisory_lock%' ORDER BY pid`);
      seen.push(pids.join(','));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]).toMatch(/^\d+$/);
  });

  it('hands over to the standby when the holder stops, which continues from the checkpoint', async () => {
    const [first] = holders();
    const standby = runners.find((r) => r !== first)!;
    const handedOverAt = await checkpoint();

    await first!.stop();
    await waitFor(() => standby.isHolder, { timeoutMs: 10_000, message: 'the standby to take the projection' });
    await appendEvents(120);
    await caughtUp('the new holder to apply the next events');

    expect(holders()).toEqual([standby]);
    const laterAppliers = await db.pool.anyFirst(
      sql.unsafe`SELECT DISTINCT applied_by FROM applied_event WHERE position > ${handedOverAt}`,
    );
    expect(laterAppliers).toHaveLength(1);
    expect(await db.pool.oneFirst(sql.unsafe`SELECT count(DISTINCT applied_by)::int FROM applied_event`)).toBe(2);
  });

  it('survives the holder losing its lock mid-stream: a runner takes over, no event applied twice or skipped', async () => {
    startRunner('C');
    const from = await checkpoint();
    const writing = appendEvents(450);

    // Cut the holder's lock session while it is working through the new events, as a network partition or
    // a restarted pgbouncer would; a stale holder may still commit a batch it had started, once.
    await waitFor(async () => (await checkpoint()) > from + 30, { timeoutMs: 20_000, message: 'the holder to be mid-stream' });
    const [lostSession] = await lockHolders();
    const terminated = await db.pool.anyFirst(sql.unsafe`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid = ${lostSession!}`);
    expect(terminated).toEqual([true]);
    await waitFor(
      async () => {
        const now = await lockHolders();
        return now.length === 1 && now[0] !== lostSession;
      },
      { timeoutMs: 10_000, message: 'a new lock session to hold the projection' },
    );

    await writing;
    await caughtUp('a runner to finish the stream after the lock loss');
    await waitFor(() => holders().length === 1, { timeoutMs: 10_000, message: 'one holder again' });
    expect(await lockHolders()).toHaveLength(1);

    const head = await db.store.headPosition();
    expect(head).toBe(appended);
    const applied = (await db.pool.any(sql.unsafe`
      SELECT position, count(*)::int AS times FROM applied_event GROUP BY position ORDER BY position`)) as readonly { position: bigint; times: number }[];
    expect(applied.filter((r) => r.times !== 1)).toEqual([]);
    expect(applied.map((r) => Number(r.position))).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    const eventIds = await db.pool.oneFirst(sql.unsafe`SELECT count(DISTINCT event_id)::int FROM applied_event`);
    expect(eventIds).toBe(head);
  });
});

describe('ProjectionRunner: a checkpoint that moved under the holder', () => {
  let db: EventLogDatabase;

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_runner_stale');
    await db.pool.query(sql.unsafe`CREATE TABLE projected_once (position bigint PRIMARY KEY)`);
  });

  afterAll(async () => {
    await db?.close();
  });

  it('recovers when a dead holder’s last batch commits just after the new holder read the checkpoint', async () => {
    // A holder killed right after sending COMMIT loses its lock session first; its batch can still commit a
    // moment later, after the standby took the lock and read the old checkpoint. The standby's first batch
    // then re-inserts rows that are already there (a unique violation, not a fence): it must re-read the
    // checkpoint and go on, rather than retry the same stale batch for ever.
    const projection: PostgresProjection = {
      name: 'runner-spec-stale',
      tables: ['projected_once'],
      async apply(tx, { recorded }) {
        await tx.query(sql.unsafe`INSERT INTO projected_once (position) VALUES (${recorded.position})`);
      },
    };
    const target = new PostgresProjectionTarget(db.pool, projection);
    for (let i = 0; i < 4; i += 1) {
      await db.store.append([
        domainWrite(streams.signIn('stale@example.test'), 'any', [SignInFailed({ email: 'stale@example.test', userId: null, reason: 'user_not_found' })], metadataAt(new Date())),
      ]);
    }
    const firstTwo = await db.store.readAll({ after: 0, limit: 2 });
    let deadHolderCommitted = false;
    const racedTarget: typeof target = Object.assign(Object.create(target) as typeof target, {
      async readCheckpoint(): Promise<number> {
        const read = await target.readCheckpoint();
        if (!deadHolderCommitted) {
          deadHolderCommitted = true;
          await target.applyBatch(toProjected(firstTwo), read, firstTwo.at(-1)!.position);
        }
        return read;
      },
    });
    const runner = new ProjectionRunner({
      store: db.store,
      target: racedTarget,
      databaseUrl: db.url,
      control: db.control,
      batchSize: 10,
      pollIntervalMs: 200,
      standbyIntervalMs: 100,
      log: quietLog,
    });
    runner.start();
    try {
      const head = await db.store.headPosition();
      await waitFor(async () => (await target.readCheckpoint()) === head, {
        timeoutMs: 15_000,
        message: 'the runner to get past the batch the dead holder committed',
      });
      expect(deadHolderCommitted).toBe(true);
      expect(await db.pool.anyFirst(sql.unsafe`SELECT position::int FROM projected_once ORDER BY position`)).toEqual([1, 2, 3, 4]);
    } finally {
      await runner.stop();
    }
  });
});

/**
 * A batch no handler writes for moves the checkpoint in one compare-and-set statement instead of a
 * transaction; it must be fenced exactly as a written batch is.
 */
describe('PostgresProjectionTarget: batches with nothing to write', () => {
  let db: EventLogDatabase;
  const NAME = 'quiet-projection';
  const notices: string[] = [];

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_quiet_batch');
    await db.pool.query(sql.unsafe`CREATE TABLE written (position bigint NOT NULL)`);
  });

  afterAll(async () => {
    await db?.close();
  });

  /** Writes only for events at even positions. */
  const evenOnly: PostgresProjection = {
    name: NAME,
    tables: ['written'],
    async apply(tx, { recorded }) {
      if (recorded.position % 2 === 0) await tx.query(sql.unsafe`INSERT INTO written (position) VALUES (${recorded.position})`);
    },
  };

  it('moves the checkpoint (and announces it) without a transaction, and refuses a moved checkpoint', async () => {
    const target = new PostgresProjectionTarget(db.pool, evenOnly);
    expect(await target.readCheckpoint()).toBe(0);
    for (let i = 0; i < 4; i += 1) {
      await db.store.append([domainWrite(streams.signIn(`q${i}@example.com`), 'any', [SignInFailed({ email: `q${i}@example.com`, userId: null, reason: 'user_not_found' })], metadataAt(new Date()))]);
    }
    const events = toProjected(await db.store.readAll({ after: 0, limit: 10 }));
    const checkpoint = async (): Promise<number> =>
      Number(await db.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${NAME}`));

    await hearCheckpointNotices(db.url, notices);

    await target.applyBatch(events.slice(0, 1), 0, 1);
    expect(await checkpoint()).toBe(1);
    await waitFor(() => notices.includes(checkpointNotice(NAME, 1)), { timeoutMs: 5000, message: 'the quiet batch to be announced' });
    await target.applyBatch(events.slice(1, 2), 1, 2);
    expect(await checkpoint()).toBe(2);
    await waitFor(() => notices.includes(checkpointNotice(NAME, 2)), { timeoutMs: 5000, message: 'the written batch to be announced' });
    expect((await db.pool.anyFirst(sql.unsafe`SELECT position FROM written`)).map(Number)).toEqual([2]);

    // Someone else (a rebuild, a new holder) moved it: neither kind of batch may write over that.
    await db.pool.query(sql.unsafe`UPDATE projection_checkpoints SET position = 3 WHERE name = ${NAME}`);
    await expect(target.applyBatch(events.slice(2, 3), 2, 3)).rejects.toThrow(/checkpoint moved/);
    await expect(target.applyBatch(events.slice(3, 4), 2, 4)).rejects.toThrow(/checkpoint moved/);
    expect(await checkpoint()).toBe(3);
    expect((await db.pool.anyFirst(sql.unsafe`SELECT position FROM written`)).map(Number)).toEqual([2]);
    expect(notices).toEqual([checkpointNotice(NAME, 1), checkpointNotice(NAME, 2)]);
  });
});

/**
 * A batch's only write goes out with the checkpoint's move as one statement; more, or a statement that cannot
 * sit in a WITH, take a transaction with the move last. Either way the rows and the checkpoint land together.
 */
describe('PostgresProjectionTarget: statements per batch', () => {
  let db: EventLogDatabase;
  const NAME = 'statements-per-batch';

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_statements');
    await db.pool.query(sql.unsafe`CREATE TABLE noted (position bigint PRIMARY KEY, copy int NOT NULL)`);
  });

  afterAll(async () => {
    await db?.close();
  });

  /** The statements the target sends to Postgres, in order, as their first word. */
  function countingPool(sent: string[]): DatabasePool {
    return new Proxy(db.pool, {
      get(pool, property, receiver) {
        if (property !== 'connect') return Reflect.get(pool, property, receiver) as unknown;
        return (handler: (connection: DatabasePoolConnection) => Promise<unknown>) =>
          pool.connect((connection) =>
            handler(
              new Proxy(connection, {
                get(target, name, inner) {
                  const method = Reflect.get(target, name, inner) as unknown;
                  if (typeof method !== 'function') return method;
                  return (query: { sql: string }, ...rest: unknown[]) => {
                    sent.push(query.sql.trim().split(/\s+/)[0]!.toUpperCase());
                    return (method as (...args: unknown[]) => unknown).call(target, query, ...rest);
                  };
                },
              }),
            ),
          );
      },
    });
  }

  /** Writes `copies` rows per event, the first of them as a WITH statement when `withClause` is set. */
  function noting(copies: number, withClause = false): PostgresProjection {
    return {
      name: NAME,
      tables: ['noted'],
      async apply(tx, { recorded }) {
        for (let copy = 0; copy < copies; copy += 1) {
          const position = recorded.position * 10 + copy;
          await tx.query(
            withClause && copy === 0
              ? sql.unsafe`WITH row AS (SELECT ${position}::bigint AS position) INSERT INTO noted SELECT position, ${copy} FROM row`
              : sql.unsafe`INSERT INTO noted (position, copy) VALUES (${position}, ${copy})`,
          );
        }
      },
    };
  }

  it('sends a lone write with the move as one statement, and anything more in a transaction that moves last', async () => {
    for (let i = 0; i < 3; i += 1) {
      await db.store.append([domainWrite(streams.signIn(`s${i}@example.com`), 'any', [SignInFailed({ email: `s${i}@example.com`, userId: null, reason: 'user_not_found' })], metadataAt(new Date()))]);
    }
    const [first, second, third] = toProjected(await db.store.readAll({ after: 0, limit: 10 }));
    const checkpoint = async (): Promise<number> =>
      Number(await db.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${NAME}`));
    const rows = async (): Promise<number[]> => (await db.pool.anyFirst(sql.unsafe`SELECT position FROM noted ORDER BY position`)).map(Number);

    const lone: string[] = [];
    const loneTarget = new PostgresProjectionTarget(countingPool(lone), noting(1));
    expect(await loneTarget.readCheckpoint()).toBe(0);
    lone.length = 0;
    await loneTarget.applyBatch([first!], 0, 1);
    expect(lone).toEqual(['WITH']);
    expect(await checkpoint()).toBe(1);
    expect(await rows()).toEqual([10]);

    const two: string[] = [];
    await new PostgresProjectionTarget(countingPool(two), noting(2)).applyBatch([second!], 1, 2);
    expect(two).toEqual(['BEGIN', 'INSERT', 'INSERT', 'SELECT', 'COMMIT']);
    expect(await checkpoint()).toBe(2);
    expect(await rows()).toEqual([10, 20, 21]);

    // A WITH of its own cannot go inside another: a transaction, even for one write.
    const nested: string[] = [];
    await new PostgresProjectionTarget(countingPool(nested), noting(1, true)).applyBatch([third!], 2, 3);
    expect(nested).toEqual(['BEGIN', 'WITH', 'SELECT', 'COMMIT']);
    expect(await checkpoint()).toBe(3);
    expect(await rows()).toEqual([10, 20, 21, 30]);
  });

  it("locks the projection's tables before the checkpoint's row, in batches of both shapes and in reset", async () => {
    // Another transaction holds the checkpoint's row; whatever then waits for it must already hold the table.
    // Every path taking the same order is what keeps a batch and a rebuild from deadlocking.
    const holdsTableWhileWaitingForRow = async (run: () => Promise<unknown>): Promise<boolean> => {
      const holder = new pg.Client({ connectionString: db.url });
      holder.on('error', () => {});
      onTestFinished(() => holder.end().catch(() => {}));
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM projection_checkpoints WHERE name = $1 FOR UPDATE', [NAME]);
      const running = run().catch(() => {});
      const waiting = sql.unsafe`
        SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      await waitFor(async () => (await db.pool.maybeOneFirst(waiting)) !== null, { timeoutMs: 10_000, message: 'the batch to wait for the row' });
      const holdsTable = await db.pool.oneFirst(sql.unsafe`
        SELECT EXISTS (
          SELECT 1 FROM pg_locks WHERE pid = (${waiting}) AND relation = 'noted'::regclass AND granted)`);
      await holder.query('ROLLBACK');
      await running;
      return holdsTable === true;
    };
    const eventAt = async (round: number): Promise<{ event: ProjectedEvent; position: number }> => {
      const { position } = await db.store.append([domainWrite(streams.signIn(`order${round}@example.com`), 'any', [SignInFailed({ email: `order${round}@example.com`, userId: null, reason: 'user_not_found' })], metadataAt(new Date()))]);
      const [event] = toProjected(await db.store.readAll({ after: position - 1, limit: 1 }));
      return { event: event!, position };
    };

    for (const copies of [1, 2]) {
      const target = new PostgresProjectionTarget(db.pool, noting(copies));
      const from = await target.readCheckpoint();
      const { event, position } = await eventAt(copies);
      expect(await holdsTableWhileWaitingForRow(() => target.applyBatch([event], from, position))).toBe(true);
    }
    const target = new PostgresProjectionTarget(db.pool, noting(1));
    expect(await holdsTableWhileWaitingForRow(() => target.reset())).toBe(true);
  });

  it('with an announcer, announces each committed move through it and sends no NOTIFY', async () => {
    const announced: string[] = [];
    const target = new PostgresProjectionTarget(db.pool, noting(2), { announce: async (notice) => announced.push(notice) });
    const from = await target.readCheckpoint();
    const { position } = await db.store.append([domainWrite(streams.signIn('announced@example.com'), 'any', [SignInFailed({ email: 'announced@example.com', userId: null, reason: 'user_not_found' })], metadataAt(new Date()))]);
    const [event] = toProjected(await db.store.readAll({ after: position - 1, limit: 1 }));

    const heard: string[] = [];
    await hearCheckpointNotices(db.url, heard);

    await target.applyBatch([event!], from, position);
    const next = await db.store.append([domainWrite(streams.signIn('announced@example.com'), 'any', [SignInFailed({ email: 'announced@example.com', userId: null, reason: 'user_not_found' })], metadataAt(new Date()))]);
    const [later] = toProjected(await db.store.readAll({ after: position, limit: 1 }));
    await expect(target.applyBatch([later!], from, next.position)).rejects.toBeInstanceOf(CheckpointFencedError);
    await target.reset();
    expect(announced).toEqual([checkpointNotice(NAME, position), checkpointNotice(NAME, 0)]);
    // Notices are delivered in commit order: once this one is heard, any the batch or the reset sent would have been.
    await db.pool.query(sql.unsafe`SELECT pg_notify(${CHECKPOINT_CHANNEL}, 'sentinel')`);
    await waitFor(() => heard.includes('sentinel'), { timeoutMs: 5000, message: 'the sentinel notice' });
    expect(heard).toEqual(['sentinel']);
  });

  it('writes nothing of a lone-write batch whose checkpoint moved, nor moves the checkpoint of one whose write fails', async () => {
    const target = new PostgresProjectionTarget(db.pool, noting(1));
    await target.readCheckpoint();
    const head = await db.store.append([domainWrite(streams.signIn('late@example.com'), 'any', [SignInFailed({ email: 'late@example.com', userId: null, reason: 'user_not_found' })], metadataAt(new Date()))]);
    const [late] = toProjected(await db.store.readAll({ after: head.position - 1, limit: 1 }));
    const noted = async (): Promise<number[]> => (await db.pool.anyFirst(sql.unsafe`SELECT position FROM noted ORDER BY position`)).map(Number);
    const before = await noted();

    const stale = Number(await db.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${NAME}`)) + 1;
    await expect(target.applyBatch([late!], stale, head.position)).rejects.toBeInstanceOf(CheckpointFencedError);
    // The checkpoint is where the batch expects it, but the write collides with a row already there: the move is undone with it.
    await db.pool.query(sql.unsafe`INSERT INTO noted (position, copy) VALUES (${head.position * 10}, 9)`);
    const current = Number(await db.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${NAME}`));
    await expect(target.applyBatch([late!], current, head.position)).rejects.toBeInstanceOf(UniqueIntegrityConstraintViolationError);

    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${NAME}`))).toBe(current);
    expect(await noted()).toEqual([...before, head.position * 10]);
  });
});

/**
 * A projection is handed only the event types it declares. A batch with none of them writes nothing, so its
 * checkpoint is held back (no write, no wake-up for waiting api processes) until something is written, the
 * runner finds itself caught up, or it stops.
 */
describe('ProjectionRunner: only the events a projection is built from', () => {
  let db: EventLogDatabase;
  const runners: ProjectionRunner[] = [];
  const NAME = 'runner-spec-handles';
  const handled = UsernameSignInFailed({ username: 'handled', userId: null, reason: 'user_not_found' });
  /** The position of the last event the runner has read from the log. */
  let readUpTo = 0;

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_handles');
    await db.pool.query(sql.unsafe`CREATE TABLE handled_event (position bigint NOT NULL, type text NOT NULL)`);
  });

  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
    await db?.close();
  });

  const projection: PostgresProjection = {
    name: NAME,
    tables: ['handled_event'],
    handles: new Set([handled.type]),
    async apply(tx, { recorded }) {
      await tx.query(sql.unsafe`INSERT INTO handled_event (position, type) VALUES (${recorded.position}, ${recorded.type})`);
    },
  };

  function startRunner(checkpointDeferMs: number): ProjectionRunner {
    const runner = new ProjectionRunner({
      store: {
        readAll: async (options) => {
          const read = await db.store.readAll(options);
          if (read.length > 0) readUpTo = read.at(-1)!.position;
          return read;
        },
        appendGeneration: () => db.store.appendGeneration(),
        waitForAppend: (generation, timeoutMs, signal) => db.store.waitForAppend(generation, timeoutMs, signal),
        appendNotices: () => db.store.appendNotices(),
      },
      target: new PostgresProjectionTarget(db.pool, projection),
      databaseUrl: db.url,
      control: db.control,
      batchSize: 50,
      pollIntervalMs: 200,
      checkpointDeferMs,
      log: quietLog,
    });
    runners.push(runner);
    runner.start();
    return runner;
  }

  async function appendUnhandled(count: number): Promise<number> {
    const email = 'unhandled@example.test';
    const events = Array.from({ length: count }, () => SignInFailed({ email, userId: null, reason: 'user_not_found' }));
    return (await db.store.append([domainWrite(streams.signIn(email), 'any', events, metadataAt(new Date()))])).position;
  }

  async function stored(): Promise<number> {
    return Number((await db.pool.maybeOneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${NAME}`)) ?? 0);
  }

  it('applies only its types, holds the checkpoint back over the others, and writes it when it stops', async () => {
    // A defer longer than the test: only a written batch or the stop may move the stored checkpoint here.
    const runner = startRunner(60_000);
    const unhandledHead = await appendUnhandled(3);
    await waitFor(() => readUpTo === unhandledHead, { timeoutMs: 10_000, message: 'the runner to read the unhandled events' });
    expect(await stored()).toBe(0);

    const handledAt = (await db.store.append([domainWrite(streams.usernameSignIn('handled'), 'any', [handled], metadataAt(new Date()))]))
      .position;
    await waitFor(async () => (await stored()) === handledAt, { timeoutMs: 10_000, message: 'the handled event to be written' });
    expect(await db.pool.any(sql.unsafe`SELECT position::int, type FROM handled_event`)).toEqual([{ position: handledAt, type: handled.type }]);

    const head = await appendUnhandled(2);
    await waitFor(() => readUpTo === head, { timeoutMs: 10_000, message: 'the runner to read the later unhandled events' });
    expect(await stored()).toBe(handledAt);
    await runner.stop();
    expect(await stored()).toBe(head);
    expect(await db.pool.anyFirst(sql.unsafe`SELECT count(*)::int FROM handled_event`)).toEqual([1]);
  });

  it('writes a held-back checkpoint once it has caught up, so it reaches the head without new events', async () => {
    const runner = startRunner(50);
    const head = await appendUnhandled(4);
    await waitFor(async () => (await stored()) === head, { timeoutMs: 10_000, message: 'the held-back checkpoint to reach the head' });
    await runner.stop();
  });
});

describe('ProjectionControl: one listener for the runners of a process', () => {
  let db: EventLogDatabase;
  const runners: ProjectionRunner[] = [];

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_control');
    for (const table of ['control_a', 'control_b']) {
      await db.pool.query(sql.unsafe`CREATE TABLE ${sql.identifier([table])} (position bigint NOT NULL)`);
    }
  });

  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
    await db?.close();
  });

  const target = (table: string): PostgresProjectionTarget =>
    new PostgresProjectionTarget(db.pool, {
      name: `control-${table}`,
      tables: [table],
      async apply(tx, { recorded }) {
        await tx.query(sql.unsafe`INSERT INTO ${sql.identifier([table])} (position) VALUES (${recorded.position})`);
      },
    });

  it('hands a rebuild request to the runner it names, which steps aside and replays; the others keep going', async () => {
    const [a, b] = [target('control_a'), target('control_b')];
    for (const t of [a, b]) {
      const runner = new ProjectionRunner({ store: db.store, target: t, databaseUrl: db.url, batchSize: 50, pollIntervalMs: 200, control: db.control, log: quietLog });
      runners.push(runner);
      runner.start();
    }
    const email = 'control@example.test';
    const events = Array.from({ length: 6 }, () => SignInFailed({ email, userId: null, reason: 'user_not_found' }));
    const head = (await db.store.append([domainWrite(streams.signIn(email), 'any', events, metadataAt(new Date()))])).position;
    const rows = async (table: string): Promise<number> => Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM ${sql.identifier([table])}`));
    await waitFor(async () => (await a.readCheckpoint()) === head && (await b.readCheckpoint()) === head, {
      timeoutMs: 10_000,
      message: 'both projections to catch up',
    });

    // resetProjection waits for the lock, which only the holder's stepping aside frees.
    await resetProjection(db.url, a, 10_000);
    await waitFor(async () => (await a.readCheckpoint()) === head, { timeoutMs: 10_000, message: 'the rebuilt projection to replay' });
    expect(await rows('control_a')).toBe(6);
    expect(await rows('control_b')).toBe(6);
    expect(await b.readCheckpoint()).toBe(head);
  });
});

/**
 * `inner` as the runner's target, with each batch it applies counted: the sizes of those that held events,
 * and where the last one ended. A batch is counted once its write has returned, and its checkpoint is stored
 * before that, so a spec waits on `to`, not on the stored checkpoint, before it looks at `sizes`.
 */
function countingBatches(inner: PostgresProjectionTarget, options: Pick<ProjectionTarget, 'gatherMs' | 'holdsBack'> = {}) {
  const counted = { sizes: [] as number[], to: 0 };
  const target: ProjectionTarget = {
    name: inner.name,
    handles: inner.handles,
    ...options,
    readCheckpoint: () => inner.readCheckpoint(),
    reset: () => inner.reset(),
    applyBatch: async (events, from, to) => {
      await inner.applyBatch(events, from, to);
      if (events.length > 0) counted.sizes.push(events.length);
      counted.to = to;
    },
  };
  return { target, counted };
}

describe('ProjectionRunner: waiting for appends said to be under way', () => {
  let db: EventLogDatabase;
  let runner: ProjectionRunner | null = null;
  /** Another process's writer (an api), which the runner hears only through the log's notices. */
  let writer: PostgresEventStore;
  let counted: { sizes: number[]; to: number };

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_linger');
    await db.pool.query(sql.unsafe`CREATE TABLE linger_applied (position bigint NOT NULL)`);
    writer = new PostgresEventStore({ databaseUrl: db.url, maximumPoolSize: 1 });
    const inner = new PostgresProjectionTarget(db.pool, {
      name: 'linger',
      tables: ['linger_applied'],
      async apply(tx, { recorded }) {
        await tx.query(sql.unsafe`INSERT INTO linger_applied (position) VALUES (${recorded.position})`);
      },
    });
    const counting = countingBatches(inner);
    counted = counting.counted;
    // Far longer than any wait below may take: a runner that waited out its bound would fail them.
    runner = new ProjectionRunner({ store: db.store, target: counting.target, databaseUrl: db.url, control: db.control, batchSize: 500, pollIntervalMs: 200, lingerMs: 60_000, log: quietLog });
    runner.start();
    await waitFor(() => runner!.isHolder, { timeoutMs: 10_000, message: 'the runner to take the lock' });
  });

  afterAll(async () => {
    await runner?.stop();
    await writer?.close();
    await db?.close();
  });

  const email = 'burst@example.test';
  const append = async (othersUnderWay: number): Promise<number> =>
    (await writer.append([domainWrite(streams.signIn(email), 'any', [SignInFailed({ email, userId: null, reason: 'user_not_found' })], metadataAt(new Date()))], { othersUnderWay }))
      .position;
  const projected = (head: number) => waitFor(() => counted.to === head, { timeoutMs: 20_000, message: 'the appends to be projected' });

  it('projects a lone writer\'s appends one by one, at once', async () => {
    counted.sizes.length = 0;
    for (let i = 0; i < 3; i += 1) await projected(await append(0));
    expect(counted.sizes).toEqual([1, 1, 1]);
  });

  it('waits for the appends the waking one said were under way, and projects them in one batch, each once', async () => {
    counted.sizes.length = 0;
    // As sign-ins whose passwords are being checked: each says how many of the others are still to come.
    let head = 0;
    for (let i = 4; i >= 0; i -= 1) head = await append(i);
    await projected(head);
    expect(counted.sizes).toEqual([5]);
    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(DISTINCT position) FROM linger_applied`))).toBe(8);
    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM linger_applied`))).toBe(8);
  });
});

describe('ProjectionRunner: gathering for a projection nobody waits on', () => {
  let db: EventLogDatabase;
  let runner: ProjectionRunner | null = null;

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_gather');
    // A log with something in it already, for the runner to read before the burst.
    const email = 'earlier@example.test';
    await db.store.append([domainWrite(streams.signIn(email), 'any', [SignInFailed({ email, userId: null, reason: 'user_not_found' })], metadataAt(new Date()))]);
  });

  afterAll(async () => {
    await runner?.stop();
    await db?.close();
  });

  it('gathers a busy log into one batch per interval for a projection nobody waits on', async () => {
    await runner?.stop();
    await db.pool.query(sql.unsafe`CREATE TABLE gathered (position bigint NOT NULL)`);
    const inner = new PostgresProjectionTarget(db.pool, {
      name: 'gathered',
      tables: ['gathered'],
      async apply(tx, { recorded }) {
        await tx.query(sql.unsafe`INSERT INTO gathered (position) VALUES (${recorded.position})`);
      },
    });
    // Longer than the burst below takes, however slow the machine.
    const { target: counting, counted } = countingBatches(inner, { gatherMs: 5_000 });
    runner = new ProjectionRunner({ store: db.store, target: counting, databaseUrl: db.url, control: db.control, batchSize: 500, pollIntervalMs: 200, log: quietLog });
    runner.start();
    await waitFor(() => counted.to > 0, { timeoutMs: 10_000, message: 'the runner to read the log so far' });
    counted.sizes.length = 0;

    const email = 'gathered@example.test';
    let head = 0;
    for (let i = 0; i < 20; i += 1) {
      head = (await db.store.append([domainWrite(streams.signIn(email), 'any', [SignInFailed({ email, userId: null, reason: 'user_not_found' })], metadataAt(new Date()))])).position;
    }
    await waitFor(() => counted.to === head, { timeoutMs: 20_000, message: 'the burst to be projected' });

    expect(Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM gathered WHERE position > ${head - 20}`))).toBe(20);
    expect(counted.sizes.reduce((sum, size) => sum + size, 0)).toBe(20);
    // The first append may be read at once; every later one waits for the interval and comes in together.
    expect(counted.sizes.length).toBeLessThanOrEqual(2);
  });
});

describe('ProjectionRunner: holding back events no reader waits for', () => {
  let db: EventLogDatabase;
  const runners: ProjectionRunner[] = [];
  const heldType = 'credentials.sign_in_failed.v1';
  const email = 'held@example.test';
  let tables = 0;

  beforeAll(async () => {
    db = await createEventLogDatabase('projection_runner_hold');
  });

  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
    await db?.close();
  });

  /**
   * A runner holding back sign-in failures for `ms`, over a store that tells how far it has read, and a
   * target that records the size of each batch it applies.
   */
  async function holdingRunner(ms: number) {
    tables += 1;
    const name = `held_${tables}`;
    await db.pool.query(sql.unsafe`CREATE TABLE ${sql.identifier([name])} (position bigint NOT NULL)`);
    const inner = new PostgresProjectionTarget(db.pool, {
      name,
      tables: [name],
      async apply(tx, { recorded }) {
        await tx.query(sql.unsafe`INSERT INTO ${sql.identifier([name])} (position) VALUES (${recorded.position})`);
      },
    });
    const progress = { readTo: 0 };
    const { target, counted } = countingBatches(inner, { holdsBack: { types: new Set([heldType]), ms } });
    const batches = counted.sizes;
    const store = {
      appendGeneration: () => db.store.appendGeneration(),
      waitForAppend: (generation: number, timeoutMs: number, signal?: AbortSignal) => db.store.waitForAppend(generation, timeoutMs, signal),
      appendNotices: () => db.store.appendNotices(),
      readAll: async (options: Parameters<typeof db.store.readAll>[0]) => {
        const read = await db.store.readAll(options);
        progress.readTo = Math.max(progress.readTo, read.at(-1)?.position ?? 0);
        return read;
      },
    };
    const runner = new ProjectionRunner({ store, target, databaseUrl: db.url, control: db.control, batchSize: 500, pollIntervalMs: 200, log: quietLog });
    runners.push(runner);
    runner.start();
    // What the log holds already, up to an event it does not hold back, is applied before the spec begins.
    const start = await appendOther();
    await waitFor(() => counted.to === start, { timeoutMs: 10_000, message: 'the runner to catch up' });
    batches.length = 0;
    const rows = async (): Promise<number> =>
      Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM ${sql.identifier([name])} WHERE position > ${start}`));
    const untilRead = (position: number) => waitFor(() => progress.readTo >= position, { timeoutMs: 10_000, message: 'the runner to read the held events' });
    const untilApplied = (position: number, message: string) =>
      waitFor(() => counted.to === position, { timeoutMs: 10_000, message });
    return { runner, inner, batches, rows, name, untilRead, untilApplied };
  }

  async function appendHeld(count: number): Promise<number> {
    const events = Array.from({ length: count }, () => SignInFailed({ email, userId: null, reason: 'user_not_found' }));
    return (await db.store.append([domainWrite(streams.signIn(email), 'any', events, metadataAt(new Date()))])).position;
  }

  async function appendOther(): Promise<number> {
    const event = UsernameSignInFailed({ username: 'held', userId: null, reason: 'user_not_found' });
    return (await db.store.append([domainWrite(streams.usernameSignIn('held'), 'any', [event], metadataAt(new Date()))])).position;
  }

  it('holds its held types once read, and applies them with the next event of another type in one batch', async () => {
    const { inner, batches, rows, untilRead, untilApplied } = await holdingRunner(60_000);
    const before = await inner.readCheckpoint();
    expect(await rows()).toBe(0);
    await appendHeld(2);
    const heldTo = await appendHeld(1);
    await untilRead(heldTo);
    expect(await rows()).toBe(0);
    expect(await inner.readCheckpoint()).toBe(before);

    const head = await appendOther();
    await untilApplied(head, 'the other event to be applied');
    expect(await rows()).toBe(4);
    expect(batches).toEqual([4]);
  });

  it('applies what it holds at once when a reader hurries it', async () => {
    const { rows, name, untilRead, untilApplied } = await holdingRunner(60_000);
    const head = await appendHeld(3);
    await untilRead(head);
    expect(await rows()).toBe(0);

    await db.pool.query(sql.unsafe`SELECT pg_notify(${PROJECTION_CONTROL_CHANNEL}, ${hurryRequest(name)})`);
    await untilApplied(head, 'the hurried events to be applied');
    expect(await rows()).toBe(3);
  });

  it('holds them no longer than its bound', async () => {
    const { rows, batches, untilRead, untilApplied } = await holdingRunner(300);
    const head = await appendHeld(2);
    await untilRead(head);
    await untilApplied(head, 'the held events to be applied on their bound');
    expect(await rows()).toBe(2);
    expect(batches).toEqual([2]);
  });

  it('applies what it holds when it stops, so nothing is lost or read again', async () => {
    const { runner, inner, rows, untilRead } = await holdingRunner(60_000);
    const head = await appendHeld(2);
    await untilRead(head);
    await runner.stop();
    expect(await inner.readCheckpoint()).toBe(head);
    expect(await rows()).toBe(2);
  });
});
