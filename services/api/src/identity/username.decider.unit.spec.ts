import { describe, expect, it } from 'vitest';
import { UsernameChanged, usernameProblem, UsernameReleased, UsernameReserved } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import {
  decideUsernameClaim,
  decideUsernameRelease,
  evolveUsernameReservation,
  initialUsernameFields,
  initialUsernameReservation,
  usernameFieldsChanged,
} from './username.decider.ts';

const claim = deciderSpec({ evolve: evolveUsernameReservation, initial: initialUsernameReservation, decide: decideUsernameClaim });
const release = deciderSpec({ evolve: evolveUsernameReservation, initial: initialUsernameReservation, decide: decideUsernameRelease });
const bounds = { minLength: 3, maxLength: 30 };

describe('username rules', () => {
  it('takes 3 to 30 letters, digits, underscores and dots by default', () => {
    for (const ok of ['ada', 'Ada_Lovelace.1815', 'a'.repeat(30), '___', '...', 'ABC']) expect(usernameProblem(ok, bounds)).toBeNull();
  });

  it('refuses a short or long one by length first, then anything outside the alphabet', () => {
    expect(usernameProblem('ab', bounds)).toBe('USERNAME_TOO_SHORT');
    expect(usernameProblem('', bounds)).toBe('USERNAME_TOO_SHORT');
    expect(usernameProblem('a'.repeat(31), bounds)).toBe('USERNAME_TOO_LONG');
    expect(usernameProblem('a!', bounds)).toBe('USERNAME_TOO_SHORT');
    for (const bad of ['ada lovelace', 'ada-l', 'ada@x', 'ädä', 'ada\n', 'ad/a', 'ａｄａ']) expect(usernameProblem(bad, bounds)).toBe('INVALID_USERNAME');
  });

  it('follows configured bounds', () => {
    expect(usernameProblem('abcd', { minLength: 5, maxLength: 6 })).toBe('USERNAME_TOO_SHORT');
    expect(usernameProblem('abcdefg', { minLength: 5, maxLength: 6 })).toBe('USERNAME_TOO_LONG');
    expect(usernameProblem('abcdef', { minLength: 5, maxLength: 6 })).toBeNull();
  });
});

describe('username reservation decider', () => {
  it('reserves a free username, lower-cased', () => {
    claim([]).when({ userId: 'u1', username: 'Ada_L' }).then([UsernameReserved({ username: 'ada_l', userId: 'u1' })]);
  });

  it("refuses a username another user holds, whatever the letter case it is asked in", () => {
    claim([UsernameReserved({ username: 'ada_l', userId: 'u0' })]).when({ userId: 'u1', username: 'ADA_L' }).thenFails('USERNAME_IS_ALREADY_TAKEN');
  });

  it('decides nothing when the user already holds it', () => {
    claim([UsernameReserved({ username: 'ada_l', userId: 'u1' })]).when({ userId: 'u1', username: 'Ada_L' }).then([]);
  });

  it('lets a released username be reserved again', () => {
    claim([UsernameReserved({ username: 'ada', userId: 'u0' }), UsernameReleased({ username: 'ada', userId: 'u0' })])
      .when({ userId: 'u1', username: 'ada' })
      .then([UsernameReserved({ username: 'ada', userId: 'u1' })]);
  });

  it('releases only a username the user holds', () => {
    release([UsernameReserved({ username: 'ada', userId: 'u1' })])
      .when({ userId: 'u1', username: 'ada' })
      .then([UsernameReleased({ username: 'ada', userId: 'u1' })]);
    release([UsernameReserved({ username: 'ada', userId: 'u0' })]).when({ userId: 'u1', username: 'ada' }).then([]);
    release([]).when({ userId: 'u1', username: 'ada' }).then([]);
  });

  it('ignores a release by someone who does not hold it', () => {
    const state = [UsernameReserved({ username: 'ada', userId: 'u0' }), UsernameReleased({ username: 'ada', userId: 'u1' })].reduce(
      evolveUsernameReservation,
      initialUsernameReservation(),
    );
    expect(state).toEqual({ status: 'reserved', userId: 'u0' });
  });
});

describe('username fields at sign-up', () => {
  it('stores the username lower-cased and shows it as typed when no display username is given', () => {
    expect(initialUsernameFields({ username: 'Ada_L' })).toEqual({ username: 'ada_l', displayUsername: 'Ada_L' });
  });

  it('keeps a given display username', () => {
    expect(initialUsernameFields({ username: 'ada_l', displayUsername: 'Ada L.' })).toEqual({ username: 'ada_l', displayUsername: 'Ada L.' });
  });

  it('takes an empty display username for none', () => {
    expect(initialUsernameFields({ username: 'Ada', displayUsername: '' })).toEqual({ username: 'ada', displayUsername: 'Ada' });
    expect(initialUsernameFields({ displayUsername: '' })).toEqual({ username: null, displayUsername: null });
  });

  it('keeps a display username without a username', () => {
    expect(initialUsernameFields({ displayUsername: 'Ada L.' })).toEqual({ username: null, displayUsername: 'Ada L.' });
  });

  it('records the fields on the user stream, or nothing when there are none', () => {
    expect(usernameFieldsChanged('u1', { username: 'ada', displayUsername: 'Ada' })).toEqual([
      UsernameChanged({ userId: 'u1', username: 'ada', displayUsername: 'Ada' }),
    ]);
    expect(usernameFieldsChanged('u1', { username: null, displayUsername: null })).toEqual([]);
  });
});
