import { hashPassword as scryptHash, verifyPassword as scryptVerify } from 'better-auth/crypto';
import { DEFAULT_ARGON2ID_COST, hashPassword as argon2Hash, verifyPassword as argon2Verify } from '@portcullis/platform';

/**
 * What the two hashes of a change of password cost each server when nothing else runs: verify the current
 * password, then hash the new one, one pair at a time, with each server's own functions and parameters
 * (Portcullis: argon2id m=19456 KiB, t=2, p=1; better-auth: node's scrypt N=16384, r=16, p=1). Alternating
 * the two in short rounds puts the machine's drift on both. Prints one JSON line:
 * { argon2id: { cpuMs, wallMs }, scrypt: { cpuMs, wallMs } } per pair (wall: the median pair).
 */
const seconds = Number(process.env.BENCH_HASH_S) || 6;
const password = 'bench password hash cost';
const rounds = 6;

const algorithms = {
  argon2id: { hash: () => argon2Hash(password, DEFAULT_ARGON2ID_COST), verify: (hash: string) => argon2Verify(hash, password) },
  scrypt: { hash: () => scryptHash(password), verify: (hash: string) => scryptVerify({ hash, password }) },
};

type Name = keyof typeof algorithms;
const totals: Record<Name, { cpuUs: number; pairs: number; walls: number[] }> = {
  argon2id: { cpuUs: 0, pairs: 0, walls: [] },
  scrypt: { cpuUs: 0, pairs: 0, walls: [] },
};

for (const name of Object.keys(algorithms) as Name[]) {
  const { hash, verify } = algorithms[name];
  if (!(await verify(await hash()))) throw new Error(`${name}: a fresh hash does not verify`);
}
for (let round = 0; round < rounds; round += 1) {
  for (const name of Object.keys(algorithms) as Name[]) {
    const { hash, verify } = algorithms[name];
    const stored = await hash();
    const deadline = performance.now() + (seconds * 1000) / rounds / 2;
    const cpu = process.cpuUsage();
    while (performance.now() < deadline) {
      const started = performance.now();
      await verify(stored);
      await hash();
      totals[name].walls.push(performance.now() - started);
      totals[name].pairs += 1;
    }
    const used = process.cpuUsage(cpu);
    totals[name].cpuUs += used.user + used.system;
  }
}

const figures = Object.fromEntries(
  (Object.keys(totals) as Name[]).map((name) => {
    const { cpuUs, pairs, walls } = totals[name];
    const sorted = [...walls].sort((a, b) => a - b);
    return [name, { cpuMs: cpuUs / 1000 / pairs, wallMs: sorted[Math.floor((sorted.length - 1) / 2)] }];
  }),
);
process.stdout.write(`${JSON.stringify(figures)}\n`);
