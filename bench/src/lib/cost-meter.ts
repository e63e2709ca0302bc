import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * Work per operation, summed over the server side: the given processes, the Postgres backends serving the
 * bench database, and Redis. On a shared, noisy machine requests/s swing with other tenants' load, while
 * CPU time and Postgres transactions per request stay put, so these show the effect of a change reliably.
 */
export interface Cost {
  /** CPU ms per operation; null where /proc is unavailable (not Linux). */
  readonly cpuMsPerOp: number | null;
  /** Committed + rolled-back transactions per operation (each autocommit statement is one). */
  readonly pgTransactionsPerOp: number | null;
}

interface Snapshot {
  /** Clock ticks per pid; a pid that is gone is absent. Null without /proc. */
  readonly procTicks: ReadonlyMap<number, number> | null;
  readonly redisCpuS: number;
  readonly pgTransactions: number | null;
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime of a process (all its threads), in clock ticks; null once it is gone or without /proc. */
function processTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** Only pids seen in both snapshots count: a pool backend that closed mid-run loses its last ticks, no more. */
function tickDelta(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [pid, ticks] of after) {
    const start = before.get(pid);
    if (start !== undefined) total += ticks - start;
  }
  return total;
}

export class CostMeter {
  private readonly admin: pg.Client;
  private readonly redis: Redis | null;

  private constructor(
    admin: pg.Client,
    redis: Redis | null,
    private readonly databaseName: string,
  ) {
    this.admin = admin;
    this.redis = redis;
  }

  static async open(options: { adminUrl: string; databaseName: string; redisUrl: string | null }): Promise<CostMeter> {
    const admin = new pg.Client({ connectionString: options.adminUrl });
    await admin.connect();
    let redis: Redis | null = null;
    if (options.redisUrl) {
      redis = new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
      redis.on('error', () => {});
      await redis.connect();
    }
    return new CostMeter(admin, redis, options.databaseName);
  }

  /**
   * Measures `run` (which returns its successful operations). `pids` are the server processes to charge;
   * `backends` and `redis` say whether the database's backends and Redis take part in this scenario.
   */
  async measure<T extends { ok: number }>(
    sources: { pids: readonly number[]; backends: boolean; redis: boolean },
    run: () => Promise<T>,
  ): Promise<{ result: T; cost: Cost }> {
    const backendPids = sources.backends ? await this.backendPids() : [];
    const pids = [...sources.pids, ...backendPids];
    const before = await this.snapshot(pids, sources);
    const result = await run();
    const after = await this.snapshot(pids, sources);
    const ops = result.ok;
    if (ops === 0) return { result, cost: { cpuMsPerOp: null, pgTransactionsPerOp: null } };
    const cpuS =
      before.procTicks === null || after.procTicks === null
        ? null
        : tickDelta(before.procTicks, after.procTicks) / clockTicks() + (after.redisCpuS - before.redisCpuS);
    return {
      result,
      cost: {
        cpuMsPerOp: cpuS === null ? null : (cpuS * 1000) / ops,
        // Backends flush their counters at most once a second, so this is right to within about a second's worth.
        pgTransactionsPerOp:
          before.pgTransactions === null || after.pgTransactions === null ? null : (after.pgTransactions - before.pgTransactions) / ops,
      },
    };
  }

  async close(): Promise<void> {
    await this.admin.end().catch(() => {});
    this.redis?.disconnect();
  }

  private async backendPids(): Promise<number[]> {
    const { rows } = await this.admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [this.databaseName]);
    return rows.map((r) => r.pid);
  }

  private async snapshot(pids: readonly number[], sources: { pids: readonly number[]; backends: boolean; redis: boolean }): Promise<Snapshot> {
    let procTicks: Map<number, number> | null = new Map();
    for (const pid of pids) {
      const ticks = processTicks(pid);
      if (ticks !== null) procTicks.set(pid, ticks);
      // A server process we started cannot be missing unless there is no /proc to read.
      else if (sources.pids.includes(pid)) procTicks = null;
      if (procTicks === null) break;
    }
    let redisCpuS = 0;
    if (sources.redis && this.redis) {
      // Server-wide: on a shared Redis this includes other clients' work.
      const info = await this.redis.info('cpu');
      const read = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
      redisCpuS = read('used_cpu_user') + read('used_cpu_sys');
    }
    let pgTransactions: number | null = null;
    if (sources.backends) {
      const { rows } = await this.admin.query<{ n: string }>(
        'SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = $1',
        [this.databaseName],
      );
      pgTransactions = rows[0] ? Number(rows[0].n) : null;
    }
    return { procTicks, redisCpuS, pgTransactions };
  }
}
