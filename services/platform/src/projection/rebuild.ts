import pg from 'pg';
import type { EventStore } from '../event-store/event-store.ts';
import { PROJECTION_CONTROL_CHANNEL, releaseRequest } from './control.ts';
import { projectedEvents } from './projected-events.ts';
import type { ProjectionTarget } from './projection.ts';
import { projectionLockKey } from './runner.ts';

/**
 * Runs `work` holding a projection's lock: the holder (if any) is asked to step aside, and picks the
 * projection up again once `work` is done, from whatever checkpoint it then finds.
 */
export async function withProjectionLock<T>(databaseUrl: string, projection: string, work: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
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
  readonly store: Pick<EventStore, 'readAll'>;
  readonly batchSize: number;
  /** Stop after the first short batch (close to the head) rather than at an empty read (at the head). */
  readonly untilNearHead?: boolean;
  readonly onProgress?: (position: number) => void;
}

/** Applies to `target` every event after `from`, batch by batch as a runner would; answers where it stopped. */
export async function replayInto(target: ProjectionTarget, from: number, options: ReplayOptions): Promise<number> {
  let checkpoint = from;
  for (;;) {
    const recorded = await options.store.readAll({ after: checkpoint, limit: options.batchSize });
    if (recorded.length === 0) return checkpoint;
    const last = recorded[recorded.length - 1]!;
    await target.applyBatch(projectedEvents(recorded, target.handles), checkpoint, last.position, last.eventId);
    checkpoint = last.position;
    options.onProgress?.(checkpoint);
    if (options.untilNearHead && recorded.length < options.batchSize) return checkpoint;
  }
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
    return await withProjectionLock(options.databaseUrl, target.name, async () => {
      const head = await replayInto(shadow, nearHead, options);
      await shadow.promote();
      return head;
    });
  } catch (error) {
    await shadow.discard().catch(() => {});
    throw error;
  }
}
