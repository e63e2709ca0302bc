import { randomBytes } from 'node:crypto';
import { createPool, type DatabasePool } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERASED, streamModel, streams, UserDeleted, UserRegistered, UserUpdated, type DomainEvent } from '@portcullis/contracts';
import { createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { loadStream, SNAPSHOT_INTERVAL } from '../command/stream-loader.ts';
import { sql } from '../database/pool.ts';
import { PostgresEventStore } from '../event-store/postgres.ts';
import { ProtectedEventStore } from '../event-store/protected-event-store.ts';
import { Eraser } from './erasure.ts';

/** A fold that keeps personal values the way deciders' states do: as the events carry them. */
interface Profile {
  readonly email: string | null;
  readonly names: readonly string[];
  readonly role: string;
}
const profileModel = streamModel<Profile>('sealed-profile-spec', 1, () => ({ email: null, names: [], role: 'member' }), (state, event: DomainEvent) => {
  if (event.type === 'user.registered.v1') return { ...state, email: event.data.email, names: [event.data.name] };
  if (event.type === 'user.updated.v1' && event.data.name) return { ...state, names: [...state.names, event.data.name] };
  return state;
});

const tag = randomBytes(4).toString('hex');
const OTHERS = 40;

/**
 * Snapshots with personal values sealed under the subjects' keys (issue 46), on real Postgres: the raw
 * table holds no plaintext, a user's deletion shreds theirs with the key and touches no snapshot, and the
 * next load of a shredded one folds the log (where the values read as erased) and keeps it again.
 */
describe('sealed snapshots', () => {
  let db: EventLogDatabase;
  let recordingPool: DatabasePool;
  const statements: string[] = [];
  const userId = `sealed-${tag}`;
  const email = `sealed-${tag}@example.com`;
  const name = (i: number) => `Sealed Name ${tag} ${i}`;

  async function keptSnapshot(streamId: string): Promise<{ version: number; model: string; state: string } | null> {
    const row = await db.pool.maybeOne(sql.unsafe`SELECT version, model, state::text AS state FROM snapshots WHERE stream_id = ${streamId}`);
    return row as { version: number; model: string; state: string } | null;
  }

  async function historyOf(user: string, mail: string, changes: number): Promise<void> {
    const events = [
      UserRegistered({ userId: user, email: mail, name: `${mail} 0`, image: null, emailVerified: false }),
      ...Array.from({ length: changes }, (_, i) => UserUpdated({ userId: user, name: `${mail} ${i + 1}` })),
    ];
    await db.store.append([domainWrite(streams.user(user), 'no_stream', events, metadataAt(new Date(), { ipAddress: '203.0.113.9', userAgent: `Agent ${tag}` }))]);
  }

  beforeAll(async () => {
    db = await createEventLogDatabase('sealed_snapshots');
    // What the eraser says to Postgres, every statement of it.
    recordingPool = await createPool(db.url, {
      interceptors: [{ name: 'record', beforeQueryExecution: (_context, query) => (statements.push(query.sql), null) }],
    });
  });

  afterAll(async () => {
    await recordingPool?.end();
    await db?.close();
  });

  it('keeps a fold\'s personal values sealed in its snapshot and opens them for the next load', async () => {
    const events = [
      UserRegistered({ userId, email, name: name(0), image: null, emailVerified: false }),
      ...Array.from({ length: SNAPSHOT_INTERVAL + 5 }, (_, i) => UserUpdated({ userId, name: name(i + 1) })),
    ];
    await db.store.append([domainWrite(streams.user(userId), 'no_stream', events, metadataAt(new Date()))]);
    const first = await loadStream(db.store, streams.user(userId), profileModel);
    expect(first.snapshotVersion).toBe(0);
    await waitFor(async () => (await keptSnapshot(streams.user(userId))) !== null, { timeoutMs: 5_000, message: 'the snapshot of the long fold' });

    const kept = (await keptSnapshot(streams.user(userId)))!;
    expect(kept.model).toBe('sealed-profile-spec@1+sealed');
    expect(kept.version).toBe(events.length);
    expect(kept.state).not.toContain(email);
    expect(kept.state).not.toContain(`Sealed Name ${tag}`);
    // Only the personal values are sealed: the role, which is no one's, stays as it is.
    expect(JSON.parse(kept.state)).toMatchObject({ role: 'member' });

    const again = await loadStream(db.store, streams.user(userId), profileModel);
    expect(again.snapshotVersion).toBe(events.length);
    expect(again.state).toEqual(first.state);
    expect(again.state.email).toBe(email);
  });

  it('keeps nothing of a fold this process did not see from its start: it could not say what in it is personal', async () => {
    const other = `unseen-${tag}`;
    await historyOf(other, `${other}@example.com`, SNAPSHOT_INTERVAL);
    // Another process: it never read the stream, so it knows none of the values its state holds.
    const stored = new PostgresEventStore({ databaseUrl: db.url });
    const fresh = new ProtectedEventStore(stored, db.personalData);
    await fresh.saveSnapshot(streams.user(other), 'sealed-profile-spec@1', SNAPSHOT_INTERVAL + 1, { email: `${other}@example.com`, names: [], role: 'member' });
    expect(await keptSnapshot(streams.user(other))).toBeNull();
    await fresh.close();
  });

  it('erases a deleted user\'s snapshot with the key: no statement touches snapshots, none is dropped, and the next load folds it erased', async () => {
    for (let i = 0; i < OTHERS; i += 1) await historyOf(`other-${i}-${tag}`, `other-${i}-${tag}@example.com`, SNAPSHOT_INTERVAL);
    for (let i = 0; i < OTHERS; i += 1) await loadStream(db.store, streams.user(`other-${i}-${tag}`), profileModel);
    await waitFor(async () => Number(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM snapshots`)) === OTHERS + 1, {
      timeoutMs: 10_000,
      message: 'a snapshot of every other user',
    });
    const snapshotsBefore = await db.pool.any(sql.unsafe`SELECT stream_id, version, state::text AS state FROM snapshots ORDER BY stream_id`);

    // A fold an older build kept unsealed while an upgrade was under way, holding the user's address.
    await db.pool.query(sql.unsafe`INSERT INTO snapshots (stream_id, model, version, state) VALUES (${`straggler-${tag}`}, 'sealed-profile-spec@1', 1, ${JSON.stringify({ email })}::jsonb)`);

    // The deletion, through a store whose eraser runs on the recording pool.
    const stored = new PostgresEventStore({ databaseUrl: db.url });
    const eraser = new Eraser(recordingPool, db.personalData, stored);
    const store = new ProtectedEventStore(stored, db.personalData, (event) => eraser.erase(event));
    const version = (await db.store.readStream(streams.user(userId))).version;
    await store.append([domainWrite(streams.user(userId), version, [UserDeleted({ userId, email })], metadataAt(new Date()))]);
    expect(await db.pool.oneFirst(sql.unsafe`SELECT wrapped_key IS NULL FROM data_key WHERE subject_id = ${`u:${userId}`}`)).toBe(true);
    expect(statements.length).toBeGreaterThan(0);
    // Only the sweep of unsealed stragglers (an older build's, during an upgrade), on the index holding them alone.
    expect(statements.filter((text) => /snapshots/i.test(text))).toEqual([`DELETE FROM snapshots WHERE model NOT LIKE '%+sealed'`]);
    // The straggler is gone; every sealed snapshot is where it was, the deleted user's too, and none holds their data readable.
    expect(await db.pool.any(sql.unsafe`SELECT stream_id, version, state::text AS state FROM snapshots ORDER BY stream_id`)).toEqual(snapshotsBefore);
    const shredded = (await keptSnapshot(streams.user(userId)))!;
    expect(shredded.state).not.toContain(email);
    expect(shredded.state).not.toContain(`Sealed Name ${tag}`);

    // A process that had the key cached forgets it as a deletion tells it to; this one, the store's own.
    db.personalData.keys.forget([`u:${userId}`]);
    const after = await loadStream(db.store, streams.user(userId), profileModel);
    expect(after.snapshotVersion).toBe(0);
    expect(after.state.email).toBe(ERASED);
    expect(new Set(after.state.names)).toEqual(new Set([ERASED]));
    // The fold from the log replaces the shredded snapshot, erased values and all.
    await waitFor(async () => (await keptSnapshot(streams.user(userId)))!.state.includes(ERASED), { timeoutMs: 5_000, message: 'the refolded snapshot' });
    expect((await loadStream(db.store, streams.user(userId), profileModel)).snapshotVersion).toBe(version + 1);
    await store.close();
  });
});
