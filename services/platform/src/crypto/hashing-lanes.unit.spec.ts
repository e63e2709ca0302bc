import { describe, expect, it } from 'vitest';
import { HashingLanes } from './password.ts';

/** A unit of work the test finishes by hand, so what runs at once is seen, not timed. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('HashingLanes', () => {
  it('runs at most `limit` at once and admits the waiting ones first come, first served', async () => {
    const lanes = new HashingLanes(2);
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      lanes.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);

    gates[1]!.open();
    await runs[1];
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);

    gates[0]!.open();
    gates[2]!.open();
    await Promise.all([runs[0], runs[2]]);
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    gates[3]!.open();
    gates[4]!.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
  });

  it('frees the lane of a failed computation', async () => {
    const lanes = new HashingLanes(1);
    await expect(lanes.run(() => Promise.reject(new Error('argon2 failed')))).rejects.toThrow('argon2 failed');
    expect(await lanes.run(async () => 'next')).toBe('next');
  });

  it('refuses a limit that is not a positive whole number', () => {
    expect(() => new HashingLanes(0)).toThrow(/positive integer/);
    expect(() => new HashingLanes(1.5)).toThrow(/positive integer/);
  });
});
