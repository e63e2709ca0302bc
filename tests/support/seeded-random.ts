import { randomInt } from 'node:crypto';

/**
 * A small deterministic PRNG (mulberry32). Randomised tests print their seed, so a failure found by chance
 * can be replayed exactly with PORTCULLIS_TEST_SEED=<seed>.
 */
export interface SeededRandom {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
}

export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    seed,
    next,
    int,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)]!;
    },
    chance: (probability: number) => next() < probability,
  };
}

/** The seed to use: PORTCULLIS_TEST_SEED when set (to replay a failure), otherwise a fresh one. */
export function testSeed(): number {
  const configured = process.env.PORTCULLIS_TEST_SEED;
  if (configured) {
    const seed = Number(configured);
    if (!Number.isInteger(seed) || seed < 0) throw new Error(`PORTCULLIS_TEST_SEED must be a non-negative integer, got ${configured}`);
    return seed;
  }
  return randomInt(0, 2 ** 31);
}
