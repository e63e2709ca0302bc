import { describe, expect, it } from 'vitest';
import { UserRegistered, UserUpdated } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.ts';
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

  it('folds updates into the state', () => {
    const state = [registered, UserUpdated({ userId: 'u1', name: 'Ada L.' })].reduce(evolveUser, initialUserState());
    expect(state).toMatchObject({ status: 'registered', name: 'Ada L.', image: null });
  });
});
