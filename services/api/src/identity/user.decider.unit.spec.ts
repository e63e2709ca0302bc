import { describe, expect, it } from 'vitest';
import { UsernameChanged, UserRegistered, UserUpdated } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideUpdateUser, evolveUser, initialUserState } from './user.decider.ts';

const given = deciderSpec({ evolve: evolveUser, initial: initialUserState, decide: decideUpdateUser });
const registered = UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: false });

describe('user decider', () => {
  it('updates the name and image it is given, and only those', () => {
    given([registered]).when({ name: 'Ada L.' }).then([UserUpdated({ userId: 'u1', name: 'Ada L.' })]);
    given([registered]).when({ image: null }).then([UserUpdated({ userId: 'u1', image: null })]);
  });

  it('refuses an update with nothing to change', () => {
    given([registered]).when({}).thenFails('NO_FIELDS_TO_UPDATE');
  });

  it('refuses to update a user that does not exist', () => {
    given([]).when({ name: 'x' }).thenFails('USER_NOT_FOUND');
  });

  it('sets a first username lower-cased, showing it as typed', () => {
    given([registered])
      .when({ username: 'Ada_L' })
      .then([UsernameChanged({ userId: 'u1', username: 'ada_l', displayUsername: 'Ada_L' })]);
  });

  it('changes the username and keeps the display username, as better-auth does', () => {
    given([registered, UsernameChanged({ userId: 'u1', username: 'ada', displayUsername: 'Ada' })])
      .when({ username: 'Lovelace' })
      .then([UsernameChanged({ userId: 'u1', username: 'lovelace', displayUsername: 'Ada' })]);
  });

  it('changes the display username alone', () => {
    given([registered, UsernameChanged({ userId: 'u1', username: 'ada', displayUsername: 'Ada' })])
      .when({ displayUsername: 'Countess' })
      .then([UsernameChanged({ userId: 'u1', username: 'ada', displayUsername: 'Countess' })]);
  });

  it('ignores an empty display username, as better-auth does', () => {
    given([registered, UsernameChanged({ userId: 'u1', username: 'ada', displayUsername: 'Ada' })]).when({ displayUsername: '' }).then([]);
  });

  it('decides nothing for the username the user already has, in any letter case', () => {
    given([registered, UsernameChanged({ userId: 'u1', username: 'ada', displayUsername: 'Ada' })]).when({ username: 'ADA' }).then([]);
  });

  it('updates the profile and the username in one decision', () => {
    given([registered])
      .when({ name: 'Ada L.', username: 'ada' })
      .then([UserUpdated({ userId: 'u1', name: 'Ada L.' }), UsernameChanged({ userId: 'u1', username: 'ada', displayUsername: 'ada' })]);
  });

  it('folds updates into the state', () => {
    const state = [registered, UserUpdated({ userId: 'u1', name: 'Ada L.' })].reduce(evolveUser, initialUserState());
    expect(state).toMatchObject({ status: 'registered', name: 'Ada L.', image: null });
  });
});
