import { describe, expect, it } from 'vitest';
import { sql } from '@portcullis/platform';
import { createEventLogDatabase } from '../support/event-log.ts';
import { eventStoreContract } from './event-store.suite.ts';

eventStoreContract('postgres', async () => {
  // A database per test: the contract asserts global facts (head, readAll from 0) about an empty log.
  const db = await createEventLogDatabase('event_store');
  return { store: db.store, cleanup: db.close };
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
