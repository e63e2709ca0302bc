import os from 'node:os';
import { log } from './lib/progress.ts';
import { Teardown } from './lib/teardown.ts';
import { redisReachable } from './lib/redis-keys.ts';
import { runAdminListUsers } from './admin/list-users-bench.ts';
import { runReads } from './reads/read-bench.ts';
import { settings } from './settings.ts';
import { runRevocation } from './revocation/revocation-bench.ts';
import { runStreams } from './streams/stream-bench.ts';
import { runWrites } from './writes/write-bench.ts';
import { runAudit } from './audit/audit-bench.ts';
import { runTelemetry } from './telemetry/telemetry-bench.ts';
import { runGrowth } from './growth/growth-bench.ts';
import { runReplicas } from './replicas/replicas-bench.ts';
import { runCacheFlush } from './cache-flush/cache-flush-bench.ts';
import { runCosts } from './costs/costs-bench.ts';

/**
 * `npm run bench`: each group asked for in BENCH_ONLY (all by default), its tables printed on stdout as soon
 * as it is done, so a failure later in the run keeps what was measured. Goals are informational: a MISS
 * never fails the run; only a broken run exits non-zero.
 */
async function main(teardown: Teardown): Promise<void> {
  const cpus = os.cpus();
  console.log(`Portcullis bench, ${new Date().toISOString()}`);
  console.log(
    `machine: ${os.availableParallelism()} cores (${cpus[0]?.model.trim() ?? 'unknown cpu'}), node ${process.version}, ${os.platform()} ${os.release()}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; rate limiting ${settings.rateLimit === 'off' ? 'off' : 'counting (limits out of reach)'}`,
  );
  const print = (section: string): void => {
    console.log('');
    console.log(section);
  };
  // Each group's servers, databases and Redis keys go when the group is done, so they idle through no other
  // group's figures; the run's teardown still reaches them on a failure or Ctrl-C.
  const inGroup = async (run: (groupTeardown: Teardown) => Promise<string>): Promise<void> => {
    const groupTeardown = new Teardown();
    teardown.add('tear down the group', () => groupTeardown.run());
    try {
      print(await run(groupTeardown));
    } finally {
      await groupTeardown.run();
    }
  };
  if (settings.groups.has('reads') || settings.groups.has('sign-in')) await inGroup((t) => runReads(t, !settings.groups.has('reads')));
  // Postgres only: before the Redis check, so it runs on a machine without Redis too.
  if (settings.groups.has('audit')) await inGroup(runAudit);
  // Needs no Redis on the Portcullis side; better-auth's side is skipped without one.
  if (settings.groups.has('admin')) await inGroup(runAdminListUsers);
  // Postgres only, no servers.
  if (settings.groups.has('growth')) await inGroup(runGrowth);
  // Redis where reachable (the session cache, as production runs it), else without.
  if (settings.groups.has('telemetry')) await inGroup(runTelemetry);
  // better-auth keeps its sessions in Redis, and the api hears of other processes' changes through it.
  const redisGroups = (['writes', 'streams', 'revocation', 'replicas', 'cache-flush'] as const).filter((group) => settings.groups.has(group));
  if (redisGroups.length > 0 && !(await redisReachable(settings.redisUrl))) {
    print(`## ${redisGroups.join(', ')}: skipped, Redis at ${settings.redisUrl} is not reachable`);
    return;
  }
  if (settings.groups.has('writes')) await inGroup(runWrites);
  if (settings.groups.has('streams')) await inGroup(runStreams);
  if (settings.groups.has('revocation')) await inGroup(runRevocation);
  if (settings.groups.has('replicas')) await inGroup(runReplicas);
  if (settings.groups.has('cache-flush')) await inGroup(runCacheFlush);
  // Only when asked: it rewrites bench/results/costs.json, which docs/capacity.md is written from.
  // Its Redis is a private redis-server, not BENCH_REDIS_URL.
  if (settings.groups.has('costs')) await inGroup(runCosts);
  log('done');
  console.log('');
  console.log('Goals are informational: a MISS never fails the run.');
}

const teardown = new Teardown();
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // Ctrl-C reaches the whole process group, and tsx passes its own copy on: a second signal must not kill
  // the teardown it would interrupt (that left the database and the bare-fastify child behind).
  process.on(signal, () => {
    if (interrupted) return log(`${signal}: already tearing down`);
    interrupted = true;
    log(`${signal}: tearing down`);
    void teardown.run().finally(() => process.exit(130));
  });
}

try {
  await main(teardown);
} catch (error) {
  if (!interrupted) {
    console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  }
} finally {
  await teardown.run();
}
