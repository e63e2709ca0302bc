import { describe, expect, it, vi } from 'vitest';
import { NotificationListener, PostgresEventStore, sql } from '@portcullis/platform';
import { createEventLogDatabase } from '../support/event-log.ts';
import { waitFor } from '../support/processes.ts';
import { eventStoreContract } from './event-store.suite.ts';

eventStoreContract('postgres', async () => {
  // A database per test: the contract asserts global facts (head, readAll from 0) about an empty log.
  const db = await createEventLogDatabase('event_store');
  const store = new PostgresEventStore({ databaseUrl: db.url, maximumPoolSize: 2 });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await db.close();
    },
  };
});

// What the services use: the same adapter behind the personal-data boundary, which must keep every promise.
eventStoreContract('postgres, personal data protected', async () => {
  const db = await createEventLogDatabase('event_store_protected');
  return { store: db.store, cleanup: () => db.close() };
});

describe('PostgresEventStore: the events table', () => {
  it('refuses to change or delete a recorded event', async () => {
    const db = await createEventLogDatabase('event_store_append_only');
    try {
      await db.store.append([
        { streamId: 'test-history', expectedVersion: 'no_stream', events: [{ type: 'test.happened.v1', data: {}, metadata: { occurredAt: new Date().toISOString() } }] },
      ]);
      await expect(db.pool.query(sql.unsafe`UPDATE events SET type = 'test.rewritten.v1'`)).rejects.toThrow(/append-only/);
      await expect(db.pool.query(sql.unsafe`DELETE FROM events`)).rejects.toThrow(/append-only/);
      expect((await db.store.readStream('test-history')).events.map((e) => e.type)).toEqual(['test.happened.v1']);
    } finally {
      await db.close();
    }
  });
});

describe('PostgresEventStore: events read narrowed to a few fields', () => {
  it('sends only the fields asked for, decrypts only those, and keeps the whole events for everyone else', async () => {
    const db = await createEventLogDatabase('event_store_narrowed');
    try {
      const occurredAt = new Date().toISOString();
      await db.store.append([
        {
          streamId: 'user-narrowed',
          expectedVersion: 'no_stream',
          events: [
            {
              type: 'user.registered.v1',
              data: { userId: 'narrowed', email: 'narrowed@example.com', name: 'Narrow', image: null, emailVerified: false },
              metadata: { occurredAt, actor: { kind: 'user', id: 'narrowed' }, ipAddress: '192.0.2.9', userAgent: 'Spec', requestId: 'r-1' },
            },
          ],
        },
      ]);
      const fields = { data: ['userId', 'image', 'organizationId'], metadata: ['actor', 'ipAddress'] } as const;
      const [narrowed] = await db.store.readAll({ after: 0, limit: 10, fields });
      // A field the event lacks, or holds null, is left out; occurredAt always comes.
      expect(narrowed!.data).toEqual({ userId: 'narrowed' });
      expect(narrowed!.metadata).toEqual({ occurredAt, actor: { kind: 'user', id: 'narrowed' }, ipAddress: '192.0.2.9' });
      const [byType] = await db.store.readAll({ after: 0, limit: 10, types: ['user.registered.v1'], until: 1_000_000, fields: { metadata: [] } });
      expect(byType!.data).toMatchObject({ email: 'narrowed@example.com', name: 'Narrow' });
      expect(byType!.metadata).toEqual({ occurredAt });
      const [whole] = await db.store.readAll({ after: 0, limit: 10 });
      expect(whole!.metadata).toMatchObject({ userAgent: 'Spec', requestId: 'r-1', ipAddress: '192.0.2.9' });
      await expect(db.store.readAll({ after: 0, limit: 10, fields: { data: ["x'); DROP TABLE events; --"] } })).rejects.toThrow(/not a field name/);
    } finally {
      await db.close();
    }
  });
});

describe('PostgresEventStore: its connections', () => {
  it('survives Postgres dropping its idle connections, and answers on a new one', async () => {
    const db = await createEventLogDatabase('event_store_dropped');
    const lost: string[] = [];
    const store = new PostgresEventStore({ databaseUrl: db.url, maximumPoolSize: 2, log: (message) => lost.push(message) });
    try {
      await store.append([
        { streamId: 'test-survivor', expectedVersion: 'no_stream', events: [{ type: 'test.happened.v1', data: {}, metadata: { occurredAt: new Date().toISOString() } }] },
      ]);
      // Every other connection to the database goes, the store's idle one among them (as a restarted
      // Postgres or a failover would drop it); an 'error' on it unhandled would end this process.
      await db.pool.query(sql.unsafe`
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
      await waitFor(() => lost.includes('event store connection lost'), { timeoutMs: 10_000, message: 'the store to notice its connection went' });
      expect((await store.readStream('test-survivor')).events.map((e) => e.type)).toEqual(['test.happened.v1']);
    } finally {
      await store.close();
      await db.close();
    }
  });
});

/**
 * The adapter itself, listening as the projector's does (the spec database's store is behind the
 * personal-data boundary), and a second one that does not listen: another process's writer, or a reader of
 * the table alone.
 */
async function listeningAndNot(prefix: string) {
  const db = await createEventLogDatabase(prefix);
  const notifications = new NotificationListener(db.url);
  const listening = new PostgresEventStore({ databaseUrl: db.url, notifications });
  await notifications.start();
  const other = new PostgresEventStore({ databaseUrl: db.url, maximumPoolSize: 1 });
  return {
    listening,
    other,
    close: async () => {
      await notifications.close();
      await listening.close();
      await other.close();
      await db.close();
    },
  };
}

describe('PostgresEventStore: the events an append notice carries', () => {
  it('hands a caught-up follower the noticed events exactly as the table holds them, without reading them back', async () => {
    const { listening: store, other: reader, close } = await listeningAndNot('event_store_noticed');
    try {
      const occurredAt = new Date().toISOString();
      const append = (streamId: string, data: unknown) =>
        store.append([{ streamId, expectedVersion: 'any', events: [{ type: 'test.happened.v1', data, metadata: { occurredAt, ipAddress: '203.0.113.7' } }] }]);
      // Each append moves the generation twice: at once in the appending process, and when its notice comes.
      const first = await append('test-noticed-a', { text: 'plain' });
      await waitFor(() => store.appendGeneration() >= 2, { timeoutMs: 10_000, message: 'the first notice' });
      const generation = store.appendGeneration();
      const second = await append('test-noticed-b', { text: 'ünïcødé ✓ "quoted" \\ back', nested: { list: [1, 2.5, null, true] } });
      const third = await append('test-noticed-a', { text: 'again' });
      await waitFor(() => store.appendGeneration() >= generation + 4, { timeoutMs: 10_000, message: 'both notices' });

      const pool = (store as unknown as { pool: { query: (...args: unknown[]) => unknown } }).pool;
      const query = vi.spyOn(pool, 'query');
      const fromNotices = await store.readAll({ after: first.position, limit: 10 });
      expect(query).not.toHaveBeenCalled();
      query.mockRestore();
      const fromTable = await reader.readAll({ after: first.position, limit: 10 });
      expect(fromNotices.map((e) => e.position)).toEqual([second.position, third.position]);
      expect(fromNotices).toEqual(fromTable);

      // Too large for a notice: the run of noticed events breaks, and reads go back to the table.
      const large = await append('test-noticed-c', { text: 'x'.repeat(10_000) });
      await waitFor(async () => (await store.readAll({ after: third.position, limit: 10 })).length === 1, { timeoutMs: 10_000, message: 'the large event' });
      const afterLarge = await store.readAll({ after: third.position, limit: 10 });
      expect(afterLarge).toEqual(await reader.readAll({ after: third.position, limit: 10 }));
      expect(afterLarge[0]!.position).toBe(large.position);
    } finally {
      await close();
    }
  });

  it('tells a listener how many other appends the writer said it had under way, notice by notice', async () => {
    // The writer as an api is to the projector: another process.
    const { listening: follower, other: writer, close } = await listeningAndNot('event_store_under_way');
    try {
      const append = (othersUnderWay?: number) =>
        writer.append(
          [{ streamId: 'test-under-way', expectedVersion: 'any', events: [{ type: 'test.happened.v1', data: {}, metadata: { occurredAt: new Date().toISOString() } }] }],
          othersUnderWay === undefined ? undefined : { othersUnderWay },
        );
      expect(follower.appendNotices()).toEqual({ heard: 0, othersUnderWay: 0 });
      await append(3);
      await waitFor(() => follower.appendNotices().heard === 1, { timeoutMs: 10_000, message: 'the first notice' });
      expect(follower.appendNotices().othersUnderWay).toBe(3);
      await append();
      await waitFor(() => follower.appendNotices().heard === 2, { timeoutMs: 10_000, message: 'the second notice' });
      expect(follower.appendNotices().othersUnderWay).toBe(0);
      // A notice too large to carry its events still counts as heard.
      await writer.append([
        { streamId: 'test-under-way', expectedVersion: 'any', events: [{ type: 'test.happened.v1', data: { text: 'x'.repeat(10_000) }, metadata: { occurredAt: new Date().toISOString() } }] },
      ], { othersUnderWay: 2 });
      await waitFor(() => follower.appendNotices().heard === 3, { timeoutMs: 10_000, message: 'the large notice' });
      expect(writer.appendNotices().heard).toBe(0);
    } finally {
      await close();
    }
  });
});
