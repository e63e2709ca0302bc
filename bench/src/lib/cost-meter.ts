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
  /** With `wal`: WAL bytes per operation of this database's records (their transactions' commits included). */
  readonly walBytesPerOp?: number;
  /** With `wal`: WAL bytes per operation the whole server wrote (other databases' work included). */
  readonly serverWalBytesPerOp?: number;
  /** With `redisCommands`: commands Redis ran per operation, in all and by command (the meter's INFO left out). */
  readonly redisCommandsPerOp?: number;
  readonly redisCommandsByName?: Readonly<Record<string, number>>;
}

/** What a scenario charges: server processes, and whether the database's backends and Redis take part. */
export interface CostSources {
  readonly pids: readonly number[];
  readonly backends: boolean;
  readonly redis: boolean;
  readonly named?: readonly NamedProcess[];
  /**
   * WAL written: the server's LSN moves, and this database's share read back with pg_walinspect (the meter
   * needs `databaseUrl` for it). The server is shared, so only the share says what the operations cost.
   */
  readonly wal?: boolean;
  /** Redis's command counts (INFO commandstats): server-wide, so meant for a Redis of the bench's own. */
  readonly redisCommands?: boolean;
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
  /** The server's WAL insert position, with `wal`. */
  readonly walLsn: string | null;
  readonly redisCalls: ReadonlyMap<string, number> | null;
}

/** Calls per command from INFO commandstats (`cmdstat_get:calls=12,usec=…`). */
export function commandCalls(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1]!, Number(match[2]));
  return calls;
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
  /** A connection to the measured database, for pg_walinspect (created there: it reads the server's WAL). */
  private readonly database: pg.Client | null;
  private databaseOid: number | null = null;

  private constructor(
    admin: pg.Client,
    redis: Redis | null,
    private readonly databaseName: string,
    database: pg.Client | null,
  ) {
    this.admin = admin;
    this.redis = redis;
    this.database = database;
  }

  static async open(options: { adminUrl: string; databaseName: string; redisUrl: string | null; databaseUrl?: string }): Promise<CostMeter> {
    const admin = new pg.Client({ connectionString: options.adminUrl });
    await admin.connect();
    let database: pg.Client | null = null;
    if (options.databaseUrl) {
      database = new pg.Client({ connectionString: options.databaseUrl });
      await database.connect();
      await database.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
      // Others' work on a shared server can recycle a window's WAL before it is read: a slot of this
      // connection's own (temporary: gone with it) keeps it, and is moved up at each window's start.
      await database.query('SELECT pg_create_physical_replication_slot($1, true, true)', [`portcullis_bench_${process.pid}_${Date.now()}`]);
    }
    let redis: Redis | null = null;
    if (options.redisUrl) {
      redis = new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
      redis.on('error', () => {});
      await redis.connect();
    }
    return new CostMeter(admin, redis, options.databaseName, database);
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
    if (sources.wal && this.database) {
      // The slot keeps what this window writes from here on, and no longer what earlier windows wrote.
      await this.database.query(
        `SELECT pg_replication_slot_advance(slot_name, pg_current_wal_flush_lsn()) FROM pg_replication_slots WHERE temporary AND active_pid = pg_backend_pid()`,
      );
    }
    const before = await this.snapshot(pids, sources, named);
    return {
      close: async () => {
        // A pool opens connections during the run too (one that idled out is reopened under load): all the
        // CPU of a backend that started in the run is the run's. One that ended in it takes its last ticks along.
        const lateBackendPids = sources.backends ? (await this.backendPids()).filter((pid) => !backendPids.includes(pid)) : [];
        const after = await this.snapshot([...pids, ...lateBackendPids], sources, named);
        const wal = before.walLsn && after.walLsn ? await this.walBetween(before.walLsn, after.walLsn) : null;
        return (ops) => this.cost(before, after, { sources, named, backendPids, lateBackendPids, ops, wal });
      },
    };
  }

  private cost(
    before: Snapshot,
    after: Snapshot,
    r: {
      sources: CostSources;
      named: readonly NamedProcess[];
      backendPids: readonly number[];
      lateBackendPids: readonly number[];
      ops: number;
      wal: { all: number; ours: number } | null;
    },
  ): Cost {
    const { ops } = r;
    if (ops === 0) return { cpuMsPerOp: null, pgTransactionsPerOp: null, parts: [] };
    const wal = r.wal;
    const calls = before.redisCalls && after.redisCalls ? this.callsPerOp(before.redisCalls, after.redisCalls, ops) : null;
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
      ...(wal ? { walBytesPerOp: wal.ours / ops, serverWalBytesPerOp: wal.all / ops } : {}),
      ...(calls ? { redisCommandsPerOp: calls.total, redisCommandsByName: calls.byName } : {}),
    };
  }

  private callsPerOp(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>, ops: number): { total: number; byName: Record<string, number> } {
    const byName: Record<string, number> = {};
    let total = 0;
    for (const [name, calls] of after) {
      // The meter's own INFO calls are not the operations'.
      if (name === 'info') continue;
      const delta = calls - (before.get(name) ?? 0);
      if (delta <= 0) continue;
      byName[name] = delta / ops;
      total += delta;
    }
    return { total: total / ops, byName };
  }

  /**
   * WAL between two flush positions: all of it, and the records of this database (a block of one of its
   * relations) with the commit records of the same transactions, which name no block.
   */
  private async walBetween(start: string, end: string): Promise<{ all: number; ours: number }> {
    const database = this.database!;
    if (this.databaseOid === null) {
      const { rows } = await database.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = current_database()');
      this.databaseOid = rows[0]!.oid;
    }
    // pg_walinspect reads only flushed WAL; the WAL writer flushes an asynchronous commit within a few 200 ms rounds.
    for (let tries = 0; ; tries += 1) {
      const { rows } = await database.query<{ flushed: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS flushed', [end]);
      if (rows[0]!.flushed) break;
      if (tries >= 100) throw new Error(`WAL up to ${end} was not flushed within 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { rows } = await database.query<{ all: string; ours: string }>(
      `WITH r AS (SELECT xid::text AS xid, record_length, block_ref FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
            ours AS (SELECT DISTINCT xid FROM r WHERE xid <> '0' AND block_ref LIKE $3)
       SELECT (pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn))::text AS all,
              coalesce(sum(record_length) FILTER (WHERE block_ref LIKE $3 OR xid IN (SELECT xid FROM ours)), 0)::text AS ours
       FROM r`,
      [start, end, `%/${this.databaseOid}/%`],
    );
    return { all: Number(rows[0]!.all), ours: Number(rows[0]!.ours) };
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
    await this.database?.end().catch(() => {});
    this.redis?.disconnect();
  }

  private async backendPids(): Promise<number[]> {
    const { rows } = await this.admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [this.databaseName]);
    return rows.map((r) => r.pid);
  }

  private async snapshot(
    pids: readonly number[],
    sources: CostSources,
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
    let walLsn: string | null = null;
    if (sources.wal && this.database) {
      // Where inserts have reached: the projector commits asynchronously, so its last records may not be flushed yet.
      const { rows } = await this.database.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
      walLsn = rows[0]!.lsn;
    }
    const redisCalls = sources.redisCommands && this.redis ? commandCalls(await this.redis.info('commandstats')) : null;
    return { procTicks, mainThreadTicks, redisCpuS, pgTransactions, walLsn, redisCalls };
  }
}
