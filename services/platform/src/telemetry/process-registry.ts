import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { DatabasePool } from 'slonik';
import { sql } from '../database/pool.ts';

export type RegisteredService = 'api' | 'projector' | 'mailer';

/** How often a process says it is alive. */
export const PROCESS_HEARTBEAT_MS = 5_000;
/** A process not seen for longer than this counts as down. */
export const PROCESS_DOWN_AFTER_MS = 15_000;
/** A process not seen for this long is forgotten: its row is removed by whichever process sweeps next. */
const FORGET_AFTER_MS = 60 * 60 * 1000;

export interface RegisteredProcess {
  readonly instanceId: string;
  readonly service: RegisteredService;
  readonly host: string;
  readonly pid: number;
  readonly startedAt: Date;
  readonly seenAt: Date;
  readonly metricsUrl: string | null;
  readonly projections: readonly string[];
  /** Seen within PROCESS_DOWN_AFTER_MS. */
  readonly up: boolean;
}

let thisProcess: string | null = null;

/** The instance id this process registered under, or null (not registered: an api built in a test). */
export function registeredInstanceId(): string | null {
  return thisProcess;
}

export interface ProcessRegistration {
  readonly instanceId: string;
  /** Stops the heartbeat and removes the row: a process that stops cleanly is gone, not down. */
  stop(): Promise<void>;
}

/**
 * Puts this process in the registry and keeps its row fresh. `projections` is asked at every heartbeat (a
 * projector's holdings change as locks move). A failed heartbeat is reported and retried at the next one.
 */
export function registerProcess(
  pool: DatabasePool,
  options: {
    readonly service: RegisteredService;
    readonly metricsUrl: string | null;
    readonly projections?: () => readonly string[];
    readonly onError: (error: unknown) => void;
    readonly heartbeatMs?: number;
  },
): ProcessRegistration {
  const instanceId = `${options.service}-${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  thisProcess = instanceId;
  const startedAt = new Date();
  let beats = 0;
  const beat = async (): Promise<void> => {
    const projections = [...(options.projections?.() ?? [])];
    await pool.query(sql.unsafe`
      INSERT INTO process_registry (instance_id, service, host, pid, started_at, seen_at, metrics_url, projections)
      VALUES (${instanceId}, ${options.service}, ${os.hostname()}, ${process.pid}, ${startedAt.toISOString()}, now(), ${options.metricsUrl},
              ${sql.array(projections, 'text')})
      ON CONFLICT (instance_id) DO UPDATE SET seen_at = now(), metrics_url = EXCLUDED.metrics_url, projections = EXCLUDED.projections`);
    // Sweeping is rare work; one process in a dozen heartbeats is plenty.
    if (beats++ % 12 === 0) {
      await pool.query(sql.unsafe`DELETE FROM process_registry WHERE seen_at < now() - make_interval(secs => ${FORGET_AFTER_MS / 1000})`);
    }
  };
  let pending: Promise<void> = beat().catch(options.onError);
  const timer = setInterval(() => {
    pending = pending.then(() => beat().catch(options.onError));
  }, options.heartbeatMs ?? PROCESS_HEARTBEAT_MS);
  timer.unref();
  return {
    instanceId,
    stop: async () => {
      clearInterval(timer);
      await pending;
      await pool.query(sql.unsafe`DELETE FROM process_registry WHERE instance_id = ${instanceId}`).catch(options.onError);
    },
  };
}

interface RegistryRow {
  readonly instance_id: string;
  readonly service: RegisteredService;
  readonly host: string;
  readonly pid: number;
  readonly started_at: number;
  readonly seen_at: number;
  readonly metrics_url: string | null;
  readonly projections: readonly string[];
  readonly up: boolean;
}

/** Every registered process, api first, then projectors and mailers, oldest first within a service. */
export async function registeredProcesses(pool: Pick<DatabasePool, 'any'>): Promise<RegisteredProcess[]> {
  const rows = (await pool.any(sql.unsafe`
    SELECT instance_id, service, host, pid, started_at, seen_at, metrics_url, projections,
           seen_at > now() - make_interval(secs => ${PROCESS_DOWN_AFTER_MS / 1000}) AS up
    FROM process_registry
    ORDER BY array_position(ARRAY['api', 'projector', 'mailer'], service), started_at`)) as readonly RegistryRow[];
  return rows.map((row) => ({
    instanceId: row.instance_id,
    service: row.service,
    host: row.host,
    pid: row.pid,
    startedAt: new Date(row.started_at),
    seenAt: new Date(row.seen_at),
    metricsUrl: row.metrics_url,
    projections: row.projections,
    up: row.up,
  }));
}
