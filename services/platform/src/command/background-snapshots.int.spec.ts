import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotKind, streamModel, UserRegistered, UserUpdated, type DomainEvent } from '@portcullis/contracts';
import { createEventLogDatabase, domainWrite, metadataAt, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { sql } from '../database/pool.ts';
import type { EventStore, SnapshotReadRequest } from '../event-store/event-store.ts';
import { SEALED_SNAPSHOT_SUFFIX } from '../personal-data/sealed-snapshots.ts';
import { BackgroundSnapshotter, SNAPSHOT_DUE_EVERY } from './background-snapshots.ts';
import { CommandHandler } from './command-handler.ts';
import { systemRequest } from './request-metadata.ts';
import { loadStream } from './stream-loader.ts';
import { fold } from './unit-of-work.ts';

/** A fold whose state depends on every event and their order, holding personal values (sealed in snapshots). */
interface Profile {
  readonly email: string | null;
  readonly updates: number;
  readonly recent: readonly string[];
  readonly digest: number;
}
const profileModel = streamModel<Profile>('background-profile-spec', 1, () => ({ email: null, updates: 0, recent: [], digest: 0 }), (state, event: DomainEvent) => {
  if (event.type === 'user.registered.v1') return { ...state, email: event.data.email, recent: [event.data.name] };
  if (event.type !== 'user.updated.v1' || !event.data.name) return state;
  const name = event.data.name;
  let digest = state.digest;
  for (const char of name) digest = (digest * 31 + char.charCodeAt(0)) % 1_000_000_007;
  return { ...state, updates: state.updates + 1, recent: [...state.recent, name].slice(-3), digest };
});

const tag = randomBytes(4).toString('hex');
const metadata = metadataAt(new Date(), { ipAddress: '203.0.113.7' });

/** The store as a loader sees it, noting the most events any one read answered with. */
function counting(store: EventStore): { store: EventStore; reads: { events: number; most: number; limits: Array<number | undefined> } } {
  const reads = { events: 0, most: 0, limits: [] as Array<number | undefined> };
  const seen: EventStore = Object.create(store) as EventStore;
  seen.readStreamsFromSnapshots = async (requests: readonly SnapshotReadRequest[]) => {
    const answer = await store.readStreamsFromSnapshots(requests);
    for (const request of requests) reads.limits.push(request.limit);
    for (const read of answer.values()) {
      reads.events += read.read.events.length;
      reads.most = Math.max(reads.most, read.read.events.length);
    }
    return answer;
  };
  return { store: seen, reads };
}

/**
 * Issue 46: the first command on a long stream without a snapshot folds a bounded number of events. The
 * log marks streams each 1,024 events (`snapshot_due`), the background snapshotter snapshots them, and any
 * load folds a long tail a chunk at a time; all of it on real Postgres, through the protected store.
 */
describe('background snapshots', () => {
  let db: EventLogDatabase;

  async function appendHistory(userId: string, updates: number): Promise<void> {
    const email = `${userId}@example.com`;
    const streamId = `user-${userId}`;
    await db.store.append([domainWrite(streamId, 'no_stream', [UserRegistered({ userId, email, name: `${userId} 0`, image: null, emailVerified: false })], metadata)]);
    for (let done = 0; done < updates; ) {
      const batch = Math.min(500, updates - done);
      const events = Array.from({ length: batch }, (_, i) => UserUpdated({ userId, name: `${userId} ${done + i + 1}` }));
      await db.store.append([domainWrite(streamId, done + 1, events, metadata)]);
      done += batch;
    }
  }

  async function dueRow(streamId: string): Promise<{ marked_version: number } | null> {
    return (await db.pool.maybeOne(sql.unsafe`SELECT marked_version FROM snapshot_due WHERE stream_id = ${streamId}`)) as { marked_version: number } | null;
  }

  async function snapshotVersion(streamId: string): Promise<number> {
    const kind = snapshotKind(profileModel) + SEALED_SNAPSHOT_SUFFIX;
    return Number((await db.pool.maybeOneFirst(sql.unsafe`SELECT version FROM snapshots WHERE stream_id = ${streamId} AND model = ${kind}`)) ?? 0);
  }

  beforeAll(async () => {
    db = await createEventLogDatabase('background_snapshots');
  });

  afterAll(async () => {
    await db?.close();
  });

  it('marks a stream each time it grows by another 1,024 events, and no sooner', async () => {
    const userId = `marked-${tag}`;
    await appendHistory(userId, SNAPSHOT_DUE_EVERY - 2);
    expect(await dueRow(`user-${userId}`)).toBeNull();
    await db.store.append([domainWrite(`user-${userId}`, SNAPSHOT_DUE_EVERY - 1, [UserUpdated({ userId, name: 'one more' })], metadata)]);
    expect(await dueRow(`user-${userId}`)).toEqual({ marked_version: SNAPSHOT_DUE_EVERY });
    await db.pool.query(sql.unsafe`DELETE FROM snapshot_due WHERE stream_id = ${`user-${userId}`}`);
  });

  it('snapshots a long stream written straight to the log in the background, and the next command folds from there', async () => {
    const userId = `long-${tag}`;
    const streamId = `user-${userId}`;
    const length = 2 * SNAPSHOT_DUE_EVERY + 37;
    await appendHistory(userId, length - 1);
    expect(await dueRow(streamId)).toEqual({ marked_version: 2 * SNAPSHOT_DUE_EVERY });
    expect(await snapshotVersion(streamId)).toBe(0);

    const snapshotter = new BackgroundSnapshotter({
      pool: db.pool,
      store: db.store,
      modelsOf: (id) => (id.startsWith('user-') ? [profileModel] : []),
      onError: (error) => {
        throw error;
      },
      idleMs: 20,
      chunk: 500,
    });
    snapshotter.start();
    try {
      await waitFor(async () => (await snapshotVersion(streamId)) === length && (await dueRow(streamId)) === null, { timeoutMs: 30_000, message: 'the snapshot at the head' });
    } finally {
      await snapshotter.stop();
    }

    const whole = fold(profileModel, await db.store.readStream(streamId));
    const { store, reads } = counting(db.store);
    const commands = new CommandHandler({ store, clock: () => new Date(), settle: async () => {}, stateCacheSize: 0 });
    const { result } = await commands.handle({ name: 'spec.rename', request: systemRequest, actorId: null }, async (unit) => {
      const loaded = await unit.load(streamId, profileModel);
      unit.append(streamId, [UserUpdated({ userId, name: 'after the snapshotter' })]);
      return loaded;
    });
    expect(reads.events).toBe(0);
    expect(result.version).toBe(length);
    expect(result.state).toEqual(whole);
    expect(result.state.email).toBe(`${userId}@example.com`);
  });

  it('takes up a stream whose claim ran out (a snapshotter that died), never one still claimed', async () => {
    const userId = `claimed-${tag}`;
    const streamId = `user-${userId}`;
    await appendHistory(userId, SNAPSHOT_DUE_EVERY + 5);
    await db.pool.query(sql.unsafe`UPDATE snapshot_due SET claimed_until = now() + interval '1 hour' WHERE stream_id = ${streamId}`);
    const snapshotter = new BackgroundSnapshotter({
      pool: db.pool,
      store: db.store,
      modelsOf: () => [profileModel],
      onError: (error) => {
        throw error;
      },
      chunk: 400,
    });
    expect(await snapshotter.drain()).toBe(0);
    expect(await snapshotVersion(streamId)).toBe(0);
    await db.pool.query(sql.unsafe`UPDATE snapshot_due SET claimed_until = now() - interval '1 second' WHERE stream_id = ${streamId}`);
    expect(await snapshotter.drain()).toBe(1);
    expect(await snapshotVersion(streamId)).toBe(SNAPSHOT_DUE_EVERY + 6);
    expect(await dueRow(streamId)).toBeNull();
  });

  it('folds a long tail a chunk at a time, to the same state and version as a whole fold', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 260 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 260 }), async (updates, chunk, snapshotAt) => {
        const userId = `chunked-${tag}-${(run += 1)}`;
        const streamId = `user-${userId}`;
        await appendHistory(userId, updates);
        // Sometimes a snapshot already part way along, as a command would have left one.
        if (snapshotAt > 0 && snapshotAt <= updates) await loadStream(db.store, streamId, profileModel, snapshotAt);
        const { store, reads } = counting(db.store);
        const loaded = await loadStream(store, streamId, profileModel, chunk);
        const whole = await db.store.readStream(streamId);
        expect(loaded.version).toBe(whole.version);
        expect(loaded.state).toEqual(fold(profileModel, whole));
        expect(reads.most).toBeLessThanOrEqual(chunk);
        expect(reads.limits.every((limit) => limit === chunk)).toBe(true);
      }),
      { numRuns: 20 },
    );
  });
});
