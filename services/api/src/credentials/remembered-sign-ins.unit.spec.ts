import { describe, expect, it } from 'vitest';
import { ReservationHints } from './password-sign-in.ts';

describe('ReservationHints', () => {
  it('remembers the latest holder, forgets a free reservation, and drops the least recently used past its limit', () => {
    const hints = new ReservationHints(2);
    hints.remember('email-a', 'user-1');
    hints.remember('email-b', 'user-2');
    hints.remember('email-a', 'user-3');
    expect(hints.get('email-a')).toBe('user-3');

    // email-b is now the least recently used, so the third entry pushes it out.
    hints.remember('email-c', 'user-4');
    expect([hints.get('email-a'), hints.get('email-b'), hints.get('email-c')]).toEqual(['user-3', undefined, 'user-4']);

    hints.remember('email-a', null);
    expect(hints.get('email-a')).toBeUndefined();
  });
});
