import {
  auditIndexProjectionName,
  erasureProjectionName,
  projectionNames,
  rebuildableProjectionNames,
  type ProjectionHolder,
  type ProjectionStatus,
} from '@portcullis/contracts';
import { parseCacheCheckpoint, parsePointer, projectionLockKey, sql } from '@portcullis/platform';
import type { ConfigPort, PoolPort, SessionCachePort, StorePort } from '../ports.ts';
import { latestRebuilds } from './projections-rebuild.ts';
import { secondsWaitingAfterEach } from './unapplied-age.ts';

export type ProjectionStatusPorts = ConfigPort & PoolPort & StorePort & SessionCachePort;

/** A shadow's checkpoint row while a rebuild runs (see PostgresProjectionTarget): not a projection of its own. */
const SHADOW_SUFFIX = '~shadow';

/**
 * The projections this deployment runs, as the api can know them without running them: the read models,
 * the session cache with Redis, the mail relay with Kafka (else the mailer's consumer of the log), and
 * whatever else has a checkpoint row.
 */
export function deployedProjections(ctx: ProjectionStatusPorts): string[] {
  const mailerGroup = ctx.config.kafka?.mailerGroup ?? 'portcullis-mailer';
  return [
    projectionNames.identity,
    projectionNames.sessions,
    projectionNames.organizations,
    ...(ctx.cache ? [projectionNames.sessionCache] : []),
    auditIndexProjectionName,
    erasureProjectionName,
    ...(ctx.config.kafka ? ['mail-relay'] : [`mail-bus:${mailerGroup}`]),
    `mail-retries:${mailerGroup}`,
  ];
}

interface CheckpointRow {
  readonly name: string;
  readonly position: string;
  readonly updated_at: number;
}

interface HolderRow {
  readonly name: string;
  readonly pid: number;
  readonly application_name: string;
  readonly client_addr: string | null;
  readonly backend_start: number | null;
}

/** The session cache keeps its checkpoint in Redis, with the generation it writes. */
async function sessionCacheCheckpoint(ctx: ProjectionStatusPorts): Promise<number | null> {
  if (!ctx.cache) return null;
  const { redis, layout } = ctx.cache;
  const pointer = parsePointer(await redis.get(layout.pointerKey));
  const generation = pointer.current ?? pointer.building;
  if (generation === null) return null;
  return parseCacheCheckpoint(await redis.get(layout.generation(generation).checkpoint))?.position ?? null;
}

/**
 * Who holds each projection's advisory lock (see ProjectionRunner): the backend in pg_locks, and its process
 * as pg_stat_activity knows it. A bigint advisory key shows as classid (high half) and objid (low half).
 */
async function holders(ctx: ProjectionStatusPorts, names: readonly string[]): Promise<Map<string, ProjectionHolder>> {
  const keys = names.map(projectionLockKey);
  const rows = (await ctx.pool.any(sql.unsafe`
    SELECT wanted.name, a.pid, a.application_name, host(a.client_addr) AS client_addr, a.backend_start
    FROM unnest(${sql.array([...names], 'text')}::text[], ${sql.array(keys, 'text')}::text[]) AS wanted(name, lock_key)
    JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(wanted.lock_key, 0)
    JOIN pg_stat_activity a ON a.pid = l.pid`)) as readonly HolderRow[];
  return new Map(
    rows.map((row) => [
      row.name,
      {
        pid: row.pid,
        applicationName: row.application_name,
        clientAddress: row.client_addr,
        connectedAt: row.backend_start === null ? null : new Date(row.backend_start).toISOString(),
      },
    ]),
  );
}

/** Seconds since the oldest event each projection has not applied: the event right after its checkpoint. */
async function lagSeconds(ctx: ProjectionStatusPorts, checkpoints: ReadonlyMap<string, number>, head: number): Promise<Map<string, number>> {
  const waiting = await secondsWaitingAfterEach(ctx.store, checkpoints.values(), head);
  const lag = new Map<string, number>();
  for (const [name, position] of checkpoints) {
    const age = waiting.get(position);
    if (age !== undefined) lag.set(name, Math.round(age * 1000) / 1000);
  }
  return lag;
}

export async function projectionStatuses(ctx: ProjectionStatusPorts): Promise<{ head: number; projections: ProjectionStatus[] }> {
  const head = await ctx.store.headPosition();
  const rows = (await ctx.pool.any(sql.unsafe`
    SELECT name, position::text AS position, updated_at FROM projection_checkpoints`)) as readonly CheckpointRow[];
  const stored = new Map(rows.filter((row) => !row.name.endsWith(SHADOW_SUFFIX)).map((row) => [row.name, row]));
  const names = [...new Set([...deployedProjections(ctx), ...stored.keys()])];
  const checkpoints = new Map<string, number>();
  const details = new Map<string, string>();
  for (const [name, row] of stored) checkpoints.set(name, Number(row.position));
  if (ctx.cache) {
    try {
      const position = await sessionCacheCheckpoint(ctx);
      if (position !== null) checkpoints.set(projectionNames.sessionCache, position);
    } catch (error) {
      details.set(projectionNames.sessionCache, `Redis: ${(error as Error).message}`);
    }
  }
  const [held, lags, rebuilds] = await Promise.all([holders(ctx, names), lagSeconds(ctx, checkpoints, head), latestRebuilds(ctx.pool)]);
  const projections = names.map((name): ProjectionStatus => {
    const checkpoint = checkpoints.get(name) ?? null;
    const updatedAt = stored.get(name)?.updated_at ?? null;
    return {
      name,
      store: name === projectionNames.sessionCache ? 'redis' : 'postgres',
      checkpoint,
      checkpointUpdatedAt: updatedAt === null ? null : new Date(updatedAt).toISOString(),
      lagEvents: checkpoint === null ? null : Math.max(0, head - checkpoint),
      lagSeconds: checkpoint === null ? null : checkpoint >= head ? 0 : (lags.get(name) ?? null),
      holder: held.get(name) ?? null,
      rebuildable: rebuildableProjectionNames.has(name),
      rebuild: rebuilds.get(name) ?? null,
      detail: details.get(name) ?? (checkpoint === null ? 'not started' : null),
    };
  });
  return { head, projections };
}
