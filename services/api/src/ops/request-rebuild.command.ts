import { randomUUID } from 'node:crypto';
import { PROJECTION_REBUILD_CHANNEL, type ProjectionRebuild } from '@portcullis/contracts';
import { sql, type DatabasePool, type EventStore } from '@portcullis/platform';
import { REBUILD_COLUMNS, rebuildOf, type RebuildRow } from './projections-rebuild.ts';

/**
 * Records a rebuild request and tells the projectors; the api runs no projection code, a projector process
 * claims it (see the projector's RebuildRequests). One under way per projection, which the unique index
 * keeps even between two api processes: a second request answers the first.
 */
export async function requestRebuild(
  { pool, store }: { readonly pool: DatabasePool; readonly store: Pick<EventStore, 'headPosition'> },
  projection: string,
  requestedBy: string | null,
): Promise<{ rebuild: ProjectionRebuild; started: boolean }> {
  const underWay = async (): Promise<ProjectionRebuild | null> => {
    const row = (await pool.maybeOne(sql.unsafe`
      SELECT ${REBUILD_COLUMNS} FROM projection_rebuilds WHERE projection = ${projection} AND status IN ('requested', 'running')`)) as RebuildRow | null;
    return row && rebuildOf(row);
  };
  for (;;) {
    const existing = await underWay();
    if (existing) return { rebuild: existing, started: false };
    // The head the request is shown against until a projector claims it (the projector sets its own).
    const head = await store.headPosition();
    const row = (await pool.maybeOne(sql.unsafe`
      INSERT INTO projection_rebuilds (id, projection, requested_by, head)
      VALUES (${randomUUID()}, ${projection}, ${requestedBy}, ${head})
      ON CONFLICT (projection) WHERE status IN ('requested', 'running') DO NOTHING
      RETURNING ${REBUILD_COLUMNS}`)) as RebuildRow | null;
    // Another request got in between: answer that one (unless it already ended, then try again).
    if (!row) continue;
    await pool.query(sql.unsafe`SELECT pg_notify(${PROJECTION_REBUILD_CHANNEL}, ${projection})`);
    return { rebuild: rebuildOf(row), started: true };
  }
}
