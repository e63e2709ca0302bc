import { describe, expect, it } from 'vitest';
import { RememberedSignIns, type SignInRead } from './password-sign-in.ts';

function readFor(userId: string | null): SignInRead {
  return { guard: { state: { failures: [], lock: null }, version: 0 }, reservationVersion: 1, userId, found: null, accountGuard: null };
}

describe('RememberedSignIns', () => {
  it('holds the latest read per identifier, forgets on request, and drops the least recently used past its limit', () => {
    const remembered = new RememberedSignIns(2);
    remembered.remember('email-a', readFor('user-1'));
    remembered.remember('email-b', readFor('user-2'));
    remembered.remember('email-a', readFor('user-3'));
    expect(remembered.get('email-a')?.userId).toBe('user-3');

    // email-b is now the least recently used, so the third entry pushes it out.
    remembered.remember('email-c', readFor('user-4'));
    expect(['email-a', 'email-b', 'email-c'].map((key) => remembered.get(key)?.userId)).toEqual(['user-3', undefined, 'user-4']);

    remembered.forget('email-a');
    expect(remembered.get('email-a')).toBeUndefined();
  });
});
