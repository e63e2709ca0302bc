import { describe, it } from 'vitest';
import { CredentialAccountCreated, EmailReserved, UserRegistered } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { evolveEmailReservation, initialEmailReservation } from '@portcullis/contracts';
import { decideRegistration, type RegisterWithPassword } from './registration.decider.ts';

const given = deciderSpec({ evolve: evolveEmailReservation, initial: initialEmailReservation, decide: decideRegistration });
const hash = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo';
const register: RegisterWithPassword = {
  userId: 'u1',
  accountId: 'a1',
  email: 'ada@example.com',
  name: 'Ada',
  image: null,
  passwordHash: hash,
};

describe('registration decider', () => {
  it('reserves the email and registers the user with a credential account', () => {
    given([])
      .when(register)
      .then({
        reservation: [EmailReserved({ email: 'ada@example.com', userId: 'u1' })],
        user: [
          UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: false }),
          CredentialAccountCreated({ userId: 'u1', accountId: 'a1', passwordHash: hash }),
        ],
      });
  });

  it('refuses an email that is already reserved', () => {
    given([EmailReserved({ email: 'ada@example.com', userId: 'u0' })]).when(register).thenFails('USER_ALREADY_EXISTS');
  });
});
