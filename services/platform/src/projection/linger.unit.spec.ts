import { describe, expect, it } from 'vitest';
import { LingerPolicy } from './linger.ts';

function clocked(lingerMs: number) {
  let now = 10_000;
  const policy = new LingerPolicy(lingerMs, () => now);
  return { policy, advance: (ms: number) => void (now += ms) };
}

describe('LingerPolicy', () => {
  it('reads at once while appends come in further apart than the linger', () => {
    const { policy, advance } = clocked(50);
    expect(policy.beforeRead()).toBe(0);
    advance(200);
    expect(policy.beforeRead()).toBe(0);
    advance(51);
    expect(policy.beforeRead()).toBe(0);
  });

  it('lingers while appends come in close together and each wait gathers more', () => {
    const { policy, advance } = clocked(50);
    expect(policy.beforeRead()).toBe(0);
    advance(10);
    expect(policy.beforeRead()).toBe(50);
    // The next wake-up comes right after that batch: it is measured from the read, not from the wake-up.
    advance(50 + 3);
    policy.onLingered(4);
    expect(policy.beforeRead()).toBe(50);
  });

  it('stops for a second after a wait that gathered nothing (a lone client waiting on its own write)', () => {
    const { policy, advance } = clocked(50);
    policy.beforeRead();
    advance(5);
    expect(policy.beforeRead()).toBe(50);
    advance(50);
    policy.onLingered(0);
    advance(5);
    expect(policy.beforeRead()).toBe(0);
    advance(990);
    expect(policy.beforeRead()).toBe(0);
    advance(10);
    expect(policy.beforeRead()).toBe(50);
  });

  it('never lingers at 0', () => {
    const { policy, advance } = clocked(0);
    for (let i = 0; i < 3; i += 1) {
      expect(policy.beforeRead()).toBe(0);
      advance(1);
    }
  });
});
