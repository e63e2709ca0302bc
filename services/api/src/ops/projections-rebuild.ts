import { DomainError, type ProjectionRebuild } from '@portcullis/contracts';
import { sql, type DatabasePool } from '@portcullis/platform';

export interface RebuildRow {
  readonly id: string;
  readonly projection: string;
  readonly status: ProjectionRebuild['status'];
  readonly requested_at: number;
  readonly requested_by: string | null;
  readonly started_at: number | null;
  readonly finished_at: number | null;
  readonly position: string;
  readonly head: string | null;
  readonly worker: string | null;
  readonly error: string | null;
}

export const REBUILD_COLUMNS = sql.fragment`id, projection, status, requested_at, requested_by, started_at, finished_at, position::text, head::text, worker, error`;

const iso = (value: number | null): string | null => (value === null ? null : new Date(value).toISOString());

export function rebuildOf(row: RebuildRow): ProjectionRebuild {
  const position = Number(row.position);
  const head = row.head === null ? null : Number(row.head);
  const percent = row.status === 'succeeded' ? 100 : head === null ? null : head === 0 ? 100 : Math.min(100, Math.round((position / head) * 1000) / 10);
  return {
    id: row.id,
    projection: row.projection,
    status: row.status,
    requestedAt: new Date(row.requested_at).toISOString(),
    requestedBy: row.requested_by,
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    position,
    head,
    percent: row.status === 'requested' ? 0 : percent,
    worker: row.worker,
    error: row.error,
  };
}

export async function findRebuild(pool: DatabasePool, id: string): Promise<ProjectionRebuild> {
  const row = (await pool.maybeOne(sql.unsafe`SELECT ${REBUILD_COLUMNS} FROM projection_rebuilds WHERE id = ${id}`)) as RebuildRow | null;
  if (!row) throw new DomainError('PROJECTION_REBUILD_NOT_FOUND');
  return rebuildOf(row);
}

/** The latest rebuild of each projection that had one. */
export async function latestRebuilds(pool: DatabasePool): Promise<Map<string, ProjectionRebuild>> {
  const rows = (await pool.any(sql.unsafe`
    SELECT DISTINCT ON (projection) ${REBUILD_COLUMNS} FROM projection_rebuilds ORDER BY projection, requested_at DESC`)) as readonly RebuildRow[];
  return new Map(rows.map((row) => [row.projection, rebuildOf(row)]));
}
