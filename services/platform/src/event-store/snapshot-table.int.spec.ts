import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../tests/support/postgres.ts';
import { PostgresEventStore } from './postgres.ts';
import { SnapshotTable } from './snapshot-table.ts';

describe('SnapshotTable: the snapshots of a log kept elsewhere', () => {
  let db: TestDatabase | undefined;
  let table: SnapshotTable | undefined;

  afterEach(async () => {
    await table?.close();
    await db?.drop();
    table = undefined;
    db = undefined;
  });

  it('keeps the newest state per stream and kind, ignores an older one, and answers only the kinds asked for', async () => {
    db = await createTestDatabase('snapshot_table', { migrated: true });
    table = new SnapshotTable(db.url);
    expect(await table.latest([])).toEqual(new Map());
    expect(await table.latest([{ streamId: 'user-1', model: 'user' }])).toEqual(new Map());

    await table.save('user-1', 'user', 5, { name: 'five' });
    await table.save('user-1', 'user', 3, { name: 'three' });
    await table.save('user-1', 'account', 2, { kind: 'account' });
    await table.save('user-2', 'user', 1, { name: 'one' });
    await table.save('user-1', 'user', 7, { name: 'seven' });

    const kept = await table.latest([
      { streamId: 'user-1', model: 'user' },
      { streamId: 'user-2', model: 'user' },
      { streamId: 'user-3', model: 'user' },
    ]);
    expect(kept).toEqual(
      new Map([
        ['user-1', { version: 7, state: { name: 'seven' } }],
        ['user-2', { version: 1, state: { name: 'one' } }],
      ]),
    );
    expect(await table.latest([{ streamId: 'user-1', model: 'account' }])).toEqual(new Map([['user-1', { version: 2, state: { kind: 'account' } }]]));
  });

  it('is the table the Postgres log keeps its snapshots in: what one saves, the other reads', async () => {
    // So the eraser's sweep of snapshots, and a move of the log between engines, find them where they always were.
    db = await createTestDatabase('snapshot_table_shared', { migrated: true });
    table = new SnapshotTable(db.url);
    const postgres = new PostgresEventStore({ databaseUrl: db.url, maximumPoolSize: 1 });
    try {
      await postgres.append([{ streamId: 'user-9', expectedVersion: 'no_stream', events: [{ type: 'test.happened.v1', data: {}, metadata: { occurredAt: new Date().toISOString() } }] }]);
      await table.save('user-9', 'user', 1, { folded: true });
      const [read] = (await postgres.readStreamsFromSnapshots([{ streamId: 'user-9', model: 'user' }])).values();
      expect(read!.snapshot).toEqual({ version: 1, state: { folded: true } });
      expect(read!.read).toEqual({ version: 1, events: [] });
    } finally {
      await postgres.close();
    }
  });
});
