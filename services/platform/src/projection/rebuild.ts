import pg from 'pg';
import { PROJECTION_CONTROL_CHANNEL, releaseRequest } from './control.ts';
import { projectionLockKey } from './runner.ts';
import type { ProjectionTarget } from './projection.ts';

/**
 * Empties a projection and sets its checkpoint to 0 while holding its lock; the holder (if any) is asked to
 * step aside and picks the projection up again afterwards, replaying it from the start of the log.
 */
export async function resetProjection(databaseUrl: string, target: ProjectionTarget, timeoutMs = 30_000): Promise<void> {
  const locker = new pg.Client({ connectionString: databaseUrl });
  const notifier = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  await notifier.connect();
  try {
    await locker.query(`SET lock_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    const acquired = locker.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [projectionLockKey(target.name)]);
    let settled = false;
    void acquired.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Repeat the request until the lock is ours: the holder may not have been listening at the first one.
    while (!settled) {
      await notifier.query('SELECT pg_notify($1, $2)', [PROJECTION_CONTROL_CHANNEL, releaseRequest(target.name)]);
      await Promise.race([acquired.catch(() => {}), new Promise((r) => setTimeout(r, 250))]);
    }
    await acquired;
    await target.reset();
  } finally {
    await locker.end().catch(() => {});
    await notifier.end().catch(() => {});
  }
}
