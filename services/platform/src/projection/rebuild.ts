import pg from 'pg';
import { storedTypesReadingAs } from '@portcullis/contracts';
import type { EventFields, EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { PROJECTION_CONTROL_CHANNEL, releaseRequest } from './control.ts';
import { projectedEvents } from './projected-events.ts';
import type { ProjectionTarget } from './projection.ts';
import { projectionLockKey } from './runner.ts';

/**
 * Runs `work` holding a projection's lock: the holder (if any) is asked to step aside, and picks the
 * projection up again once `work` is done, from whatever checkpoint it then finds.
 */
async function withProjectionLock<T>(databaseUrl: string, projection: string, work: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const locker = new pg.Client({ connectionString: databaseUrl });
  const notifier = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  await notifier.connect();
  try {
    await locker.query(`SET lock_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    const acquired = locker.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [projectionLockKey(projection)]);
    let settled = false;
    void acquired.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Repeat the request until the lock is ours: the holder may not have been listening at the first one.
    while (!settled) {
      await notifier.query('SELECT pg_notify($1, $2)', [PROJECTION_CONTROL_CHANNEL, releaseRequest(projection)]);
      await Promise.race([acquired.catch(() => {}), new Promise((r) => setTimeout(r, 250))]);
    }
    await acquired;
    return await work();
  } finally {
    await locker.end().catch(() => {});
    await notifier.end().catch(() => {});
  }
}

/** Empties a projection that has no shadow (the mail relay) and sets its checkpoint to 0 under its lock. */
export async function resetProjection(databaseUrl: string, target: ProjectionTarget, timeoutMs = 30_000): Promise<void> {
  if (!target.reset) throw new Error(`${target.name} cannot be reset`);
  await withProjectionLock(databaseUrl, target.name, () => target.reset!(), timeoutMs);
}

export interface ReplayOptions {
  readonly store: Pick<EventStore, 'readAll' | 'headPosition' | 'eventIdAt'>;
  readonly batchSize: number;
  /** Stop after the first short batch (close to the head) rather than at an empty read (at the head). */
  readonly untilNearHead?: boolean;
  readonly onProgress?: (position: number) => void;
  /** Ends the replay between batches (a projector stopping, or a rebuild taken over): it throws the reason. */
  readonly signal?: AbortSignal;
}

interface ReadBatch {
  readonly recorded: readonly RecordedEvent[];
  /** Where the checkpoint moves once the batch is applied, and the id of the log's event there. */
  readonly to: number;
  readonly toEventId: string | null;
  /** A whole batch: the log may have more right after it. */
  readonly full: boolean;
}

/**
 * The next batch of the events a projection is built from. When it is built from a few types, the store
 * sends only those: a replay of the identity tables then reads a quarter of the log, not all of it. Such
 * a read covers a range of positions it may return little of, so the head is read first: every event up
 * to it has committed, and a read of that range that comes back short has seen all of it.
 */
async function readBatch(store: ReplayOptions['store'], after: number, limit: number, types: readonly string[] | undefined, fields: EventFields | undefined): Promise<ReadBatch> {
  if (!types) {
    const recorded = await store.readAll({ after, limit, fields });
    const last = recorded.at(-1);
    return { recorded, to: last?.position ?? after, toEventId: last?.eventId ?? null, full: recorded.length === limit };
  }
  const head = await store.headPosition();
  if (head <= after) return { recorded: [], to: after, toEventId: null, full: false };
  const recorded = await store.readAll({ after, limit, types, until: head, fields });
  const last = recorded.at(-1);
  if (last && recorded.length === limit) return { recorded, to: last.position, toEventId: last.eventId, full: true };
  const toEventId = last?.position === head ? last.eventId : await store.eventIdAt(head);
  return { recorded, to: head, toEventId, full: false };
}

/** Applies to `target` every event after `from`, batch by batch as a runner would; answers where it stopped. */
export async function replayInto(target: ProjectionTarget, from: number, options: ReplayOptions): Promise<number> {
  const types = target.handles ? storedTypesReadingAs(target.handles) : undefined;
  const batchSize = Math.min(options.batchSize, target.batchLimit ?? Infinity);
  let checkpoint = from;
  let next: Promise<ReadBatch> | null = readBatch(options.store, checkpoint, batchSize, types, target.reads);
  while (next) {
    const batch: ReadBatch = await next;
    options.signal?.throwIfAborted();
    if (batch.to === checkpoint) return checkpoint;
    // The next batch is read while this one is written: Postgres reads and writes while this process parses.
    next = options.untilNearHead && !batch.full ? null : readBatch(options.store, batch.to, batchSize, types, target.reads);
    // Its failure, if it fails, is met where it is awaited; a failed write leaves it unawaited.
    next?.catch(() => {});
    const events = projectedEvents(batch.recorded, target.handles, undefined, { parse: target.reads?.data === undefined });
    if (target.replayBatch) await target.replayBatch(events, checkpoint, batch.to);
    else await target.applyBatch(events, checkpoint, batch.to, batch.toEventId);
    checkpoint = batch.to;
    options.onProgress?.(checkpoint);
  }
  return checkpoint;
}

export interface RebuildOptions extends Omit<ReplayOptions, 'untilNearHead'> {
  readonly databaseUrl: string;
}

/**
 * Rebuilds a read model beside the one being served: the log is replayed into a shadow (empty tables in a
 * schema of their own, or a new cache generation) while readers keep the live state; then, holding the
 * projection's lock, the shadow is brought to the head and swapped in at once. Readers never see a state
 * that is not a whole prefix of the log, so a replay cannot bring back a session between its creation and
 * its revocation. A rebuild that fails leaves the live state as it was.
 */
export async function rebuildAside(target: ProjectionTarget, options: RebuildOptions): Promise<number> {
  if (!target.createShadow) throw new Error(`${target.name} is not a read model that can be rebuilt beside itself`);
  const shadow = await target.createShadow();
  try {
    // Most of the log while the live projection keeps going; the lock only for the last stretch.
    const nearHead = await replayInto(shadow, 0, { ...options, untilNearHead: true });
    // Its indexes too, which take seconds on a long log: the stretch under the lock is then short.
    await shadow.loaded?.();
    return await withProjectionLock(options.databaseUrl, target.name, async () => {
      const head = await replayInto(shadow, nearHead, options);
      options.signal?.throwIfAborted();
      await shadow.promote();
      return head;
    });
  } catch (error) {
    await shadow.discard().catch(() => {});
    throw error;
  }
}
