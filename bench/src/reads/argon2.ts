import os from 'node:os';
import { spawnEntry, tail } from '../lib/children.ts';
import { log } from '../lib/progress.ts';
import { settings } from '../settings.ts';

export interface Argon2Figures {
  readonly concurrency: number;
  readonly verificationsPerSecond: number;
  readonly verifyCpuMs: number;
  readonly hashesPerSecond?: number;
}

export async function measureArgon2(mode: 'verify' | 'both'): Promise<Argon2Figures> {
  log(`measuring argon2id ceiling (${mode === 'both' ? 'verify + hash' : 'verify'})`);
  const concurrency = os.availableParallelism();
  const child = spawnEntry('argon2-ceiling', 'bench/src/argon2-ceiling.ts', {
    ...process.env,
    BENCH_ARGON2_CONCURRENCY: String(concurrency),
    BENCH_ARGON2_S: String(settings.argon2S),
    BENCH_ARGON2_MODE: mode,
    // argon2 runs on the libuv threadpool (4 threads by default); it must not be what limits the lanes.
    UV_THREADPOOL_SIZE: String(Math.max(4, concurrency)),
  });
  const { code } = await child.exited;
  if (code !== 0) throw new Error(`argon2 ceiling exited with ${code}\n${tail(child.output())}`);
  return JSON.parse(child.output().trim().split('\n').at(-1) ?? '') as Argon2Figures;
}

