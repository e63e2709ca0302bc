import { describe, it } from 'vitest';
import { CredentialAccountCreated, EmailReserved, UserRegistered, evolveEmailReservation, initialEmailReservation } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideRegistration, type Registration } from './registration.decider.ts';

const given = deciderSpec({ evolve: evolveEmailReservation, initial: initialEmailReservation, decide: decideRegistration });
const hash = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo';
const signUp: Registration = {
  userId: 'u1',
  email: 'ada@example.com',
  name: 'Ada',
  image: null,
  emailVerified: false,
  credential: { accountId: 'a1', passwordHash: hash },
  refusal: 'USER_ALREADY_EXISTS',
};

describe('registration decider', () => {
  it('reserves the email and registers the user with a credential account', () => {
    given([])
      .when(signUp)
      .then({
        reservation: [EmailReserved({ email: 'ada@example.com', userId: 'u1' })],
        user: [
          UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: false }),
          CredentialAccountCreated({ userId: 'u1', accountId: 'a1', passwordHash: hash }),
        ],
      });
  });

  it('registers a user without a password account, verified as an admin says', () => {
    given([])
      .when({ ...signUp, credential: null, emailVerified: true, refusal: 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL' })
      .then({
        reservation: [EmailReserved({ email: 'ada@example.com', userId: 'u1' })],
        user: [UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: true })],
      });
  });

  it('refuses an email that is already reserved, in the words of whoever asked', () => {
    given([EmailReserved({ email: 'ada@example.com', userId: 'u0' })]).when(signUp).thenFails('USER_ALREADY_EXISTS');
    given([EmailReserved({ email: 'ada@example.com', userId: 'u0' })])
      .when({ ...signUp, refusal: 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL' })
      .thenFails('USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL');
  });
});
