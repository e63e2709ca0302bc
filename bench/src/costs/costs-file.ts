import { z } from 'zod';

/**
 * bench/results/costs.json: what each key operation costs the server side, written by the `costs` group and
 * read by `npm run capacity` (docs/capacity.md). Per operation, so that it scales by arithmetic, unlike
 * operations per second, which swing with whatever else the host is running.
 */

export const operationKeys = ['get-session-cookie', 'get-session-bearer', 'sign-in', 'sign-up', 'sign-out', 'set-active', 'update-user'] as const;
export type OperationKey = (typeof operationKeys)[number];

const cpuMsPerOp = z.object({
  /** The api process, all threads (argon2 runs on its libuv threadpool). */
  api: z.number(),
  apiMainThread: z.number(),
  projector: z.number(),
  mailer: z.number(),
  /** The backends serving the bench database. */
  postgres: z.number(),
  redis: z.number(),
  total: z.number(),
});

export const operationCostSchema = z.object({
  name: z.string(),
  clients: z.number(),
  ops: z.number(),
  windowS: z.number(),
  opsPerSecond: z.number(),
  cpuMsPerOp,
  pgTransactionsPerOp: z.number(),
  /** The bench database's WAL records (pg_walinspect), commits of its transactions included. */
  walBytesPerOp: z.number(),
  /** The whole server's WAL in the window, other tenants' included. */
  serverWalBytesPerOp: z.number(),
  eventsPerOp: z.number(),
  appendsPerOp: z.number(),
  /** Growth of the `events` table with its indexes. */
  logBytesPerOp: z.number(),
  redisCommandsPerOp: z.number(),
  redisCommandsByName: z.record(z.string(), z.number()),
  mailsPerOp: z.number(),
});
export type OperationCost = z.infer<typeof operationCostSchema>;

export const appendCeilingSchema = z.object({
  connections: z.number(),
  eventsPerAppend: z.number(),
  appendsPerSecond: z.number(),
  eventsPerSecond: z.number(),
  p50Ms: z.number(),
  postgresCpuMsPerAppend: z.number(),
  walBytesPerAppend: z.number(),
});
export type AppendCeiling = z.infer<typeof appendCeilingSchema>;

export const costsFileSchema = z.object({
  measuredAt: z.string(),
  commit: z.string(),
  host: z.object({
    cores: z.number(),
    cpu: z.string(),
    node: z.string(),
    loadAverageBefore: z.array(z.number()),
    loadAverageAfter: z.array(z.number()),
    postgres: z.string(),
    synchronousCommit: z.string(),
    redis: z.string(),
    note: z.string(),
  }),
  settings: z.object({ warmupS: z.number(), durationS: z.number() }),
  operations: z.object(Object.fromEntries(operationKeys.map((key) => [key, operationCostSchema])) as Record<OperationKey, typeof operationCostSchema>),
  argon2: z.object({ concurrency: z.number(), verificationsPerSecond: z.number(), verifyCpuMs: z.number(), hashesPerSecond: z.number() }),
  sessionMemory: z.object({
    sessions: z.number(),
    /** MEMORY USAGE summed over the cache's keys, per session (user keys shared by a user's sessions included). */
    redisKeyBytesPerSession: z.number(),
    /** Redis's used_memory growth while the sessions were cached, per session: keys, values and the dictionary. */
    redisUsedMemoryPerSession: z.number(),
    /** The `session` read model, table and indexes, per session. */
    readModelBytesPerSession: z.number(),
  }),
  appendCeiling: z.array(appendCeilingSchema),
  /**
   * One 8 kB write and its fdatasync (Postgres' wal_sync_method on Linux), as pg_test_fsync measures it in the
   * temporary directory: what each commit waits for. Null where pg_test_fsync is not installed.
   */
  diskFlush: z.object({ method: z.string(), msPerFlush: z.number(), directory: z.string() }).nullable(),
});
export type CostsFile = z.infer<typeof costsFileSchema>;
