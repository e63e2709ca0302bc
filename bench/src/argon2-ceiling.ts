import os from 'node:os';
import { DEFAULT_ARGON2ID_COST, hashPassword, verifyPassword } from '@portcullis/platform';

/**
 * The machine's argon2id throughput with the api's parameters, run in a process of its own so that its
 * libuv threadpool (where argon2's native work runs) can be sized to the cores before first use.
 * BENCH_ARGON2_MODE is `verify` or `both`. Prints one JSON line:
 * { concurrency, verificationsPerSecond, verifyCpuMs, hashesPerSecond? }.
 */
const concurrency = Number(process.env.BENCH_ARGON2_CONCURRENCY) || os.availableParallelism();
const seconds = Number(process.env.BENCH_ARGON2_S) || 5;
const password = 'bench argon2 ceiling password';

async function throughput(operation: () => Promise<unknown>): Promise<{ perSecond: number; cpuMsPerOp: number }> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let done = 0;
  // Each lane starts a new operation as soon as its previous one ends, so all cores stay busy until the deadline.
  const lane = async (): Promise<void> => {
    while (performance.now() < deadline) {
      await operation();
      done += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const elapsedS = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { perSecond: done / elapsedS, cpuMsPerOp: (cpu.user + cpu.system) / 1000 / done };
}

const hash = await hashPassword(password, DEFAULT_ARGON2ID_COST);
if (!(await verifyPassword(hash, password))) throw new Error('argon2 verification of a fresh hash failed');
const verify = await throughput(() => verifyPassword(hash, password));
const hashing = process.env.BENCH_ARGON2_MODE === 'both' ? await throughput(() => hashPassword(password, DEFAULT_ARGON2ID_COST)) : null;
process.stdout.write(
  `${JSON.stringify({
    concurrency,
    verificationsPerSecond: verify.perSecond,
    verifyCpuMs: verify.cpuMsPerOp,
    ...(hashing ? { hashesPerSecond: hashing.perSecond } : {}),
  })}\n`,
);
