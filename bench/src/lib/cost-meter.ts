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
  /** CPU ms per operation by part (each named process's main thread and other threads, Postgres, Redis). */
  readonly parts: readonly { readonly part: string; readonly cpuMsPerOp: number }[];
}

/** What a scenario charges: server processes, and whether the database's backends and Redis take part. */
export interface CostSources {
  readonly pids: readonly number[];
  readonly backends: boolean;
  readonly redis: boolean;
  readonly named?: readonly NamedProcess[];
}

/** An open window of measurement (see `CostMeter.open`). */
export interface CostWindow {
  close(): Promise<(ops: number) => Cost>;
}

/** A server process whose CPU is also shown on its own, its main (JavaScript) thread apart from the rest. */
export interface NamedProcess {
  readonly label: string;
  readonly pid: number;
}

interface Snapshot {
  /** Clock ticks per pid; a pid that is gone is absent. Null without /proc. */
  readonly procTicks: ReadonlyMap<number, number> | null;
  /** Clock ticks of each named process's main thread (its tid is its pid). */
  readonly mainThreadTicks: ReadonlyMap<number, number>;
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

/** utime + stime of one thread of a process; null once it is gone or without /proc. */
function threadTicks(pid: number, tid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
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
  async measure<T extends { ok: number }>(sources: CostSources, run: () => Promise<T>): Promise<{ result: T; cost: Cost }> {
    const window = await this.open(sources);
    const result = await run();
    const costOf = await window.close();
    return { result, cost: costOf(result.ok) };
  }

  /**
   * Opens a window of measurement now; `close()` ends it and answers the cost for however many operations
   * the caller then counts in it. For load that runs on while the window opens and closes (a warm-up before,
   * in-flight requests after).
   */
  async open(sources: CostSources): Promise<CostWindow> {
    const backendPids = sources.backends ? await this.backendPids() : [];
    const pids = [...sources.pids, ...backendPids];
    const named = sources.named ?? [];
    const before = await this.snapshot(pids, sources, named);
    return {
      close: async () => {
        // A pool opens connections during the run too (one that idled out is reopened under load): all the
        // CPU of a backend that started in the run is the run's. One that ended in it takes its last ticks along.
        const lateBackendPids = sources.backends ? (await this.backendPids()).filter((pid) => !backendPids.includes(pid)) : [];
        const after = await this.snapshot([...pids, ...lateBackendPids], sources, named);
        return (ops) => this.cost(before, after, { sources, named, backendPids, lateBackendPids, ops });
      },
    };
  }

  private cost(
    before: Snapshot,
    after: Snapshot,
    r: { sources: CostSources; named: readonly NamedProcess[]; backendPids: readonly number[]; lateBackendPids: readonly number[]; ops: number },
  ): Cost {
    const { ops } = r;
    if (ops === 0) return { cpuMsPerOp: null, pgTransactionsPerOp: null, parts: [] };
    const lateTicks = r.lateBackendPids.reduce((sum, pid) => sum + (after.procTicks?.get(pid) ?? 0), 0);
    const cpuS =
      before.procTicks === null || after.procTicks === null
        ? null
        : (tickDelta(before.procTicks, after.procTicks) + lateTicks) / clockTicks() + (after.redisCpuS - before.redisCpuS);
    return {
      cpuMsPerOp: cpuS === null ? null : (cpuS * 1000) / ops,
      // Backends flush their counters at most once a second, so this is right to within about a second's worth.
      pgTransactionsPerOp:
        before.pgTransactions === null || after.pgTransactions === null ? null : (after.pgTransactions - before.pgTransactions) / ops,
      parts:
        before.procTicks && after.procTicks ? this.parts(before, after, r.named, r.backendPids, lateTicks, r.sources.redis, ops) : [],
    };
  }

  private parts(
    before: Snapshot,
    after: Snapshot,
    named: readonly NamedProcess[],
    backendPids: readonly number[],
    lateBackendTicks: number,
    redis: boolean,
    ops: number,
  ): { part: string; cpuMsPerOp: number }[] {
    const perOp = (ticks: number): number => ((ticks / clockTicks()) * 1000) / ops;
    const delta = (snapshot: (s: Snapshot) => ReadonlyMap<number, number> | null, pid: number): number =>
      (snapshot(after)?.get(pid) ?? 0) - (snapshot(before)?.get(pid) ?? 0);
    const parts: { part: string; cpuMsPerOp: number }[] = [];
    for (const { label, pid } of named) {
      const main = delta((s) => s.mainThreadTicks, pid);
      parts.push({ part: `${label} main thread`, cpuMsPerOp: perOp(main) });
      parts.push({ part: `${label} other threads`, cpuMsPerOp: perOp(delta((s) => s.procTicks, pid) - main) });
    }
    if (backendPids.length > 0 || lateBackendTicks > 0) {
      const backends = new Set(backendPids);
      const only = (s: Snapshot): Map<number, number> => new Map([...(s.procTicks ?? [])].filter(([pid]) => backends.has(pid)));
      parts.push({ part: 'postgres', cpuMsPerOp: perOp(tickDelta(only(before), only(after)) + lateBackendTicks) });
    }
    if (redis) parts.push({ part: 'redis', cpuMsPerOp: ((after.redisCpuS - before.redisCpuS) * 1000) / ops });
    return parts;
  }

  async close(): Promise<void> {
    await this.admin.end().catch(() => {});
    this.redis?.disconnect();
  }

  private async backendPids(): Promise<number[]> {
    const { rows } = await this.admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [this.databaseName]);
    return rows.map((r) => r.pid);
  }

  private async snapshot(
    pids: readonly number[],
    sources: { pids: readonly number[]; backends: boolean; redis: boolean },
    named: readonly NamedProcess[],
  ): Promise<Snapshot> {
    const mainThreadTicks = new Map<number, number>();
    for (const { pid } of named) {
      const ticks = threadTicks(pid, pid);
      if (ticks !== null) mainThreadTicks.set(pid, ticks);
    }
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
    return { procTicks, mainThreadTicks, redisCpuS, pgTransactions };
  }
}
