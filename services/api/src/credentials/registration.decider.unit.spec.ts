import { describe, it } from 'vitest';
import { CredentialAccountCreated, EmailReserved, SessionCreated, SessionOpened, UserRegistered } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.ts';
import { evolveEmailReservation, initialEmailReservation } from '../identity/email-reservation.decider.ts';
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
  session: null,
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
        session: null,
      });
  });

  it('opens the first session when signing in on sign-up', () => {
    const session = {
      sessionId: 's1',
      tokenHash: 'b'.repeat(64),
      expiresAt: new Date('2026-01-08T00:00:00.000Z'),
      ipAddress: '127.0.0.1',
      userAgent: 'test',
      rememberMe: false,
    };
    given([])
      .when({ ...register, session })
      .then({
        reservation: [EmailReserved({ email: 'ada@example.com', userId: 'u1' })],
        user: [
          UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: false }),
          CredentialAccountCreated({ userId: 'u1', accountId: 'a1', passwordHash: hash }),
        ],
        session: {
          session: SessionCreated({
            sessionId: 's1',
            userId: 'u1',
            tokenHash: 'b'.repeat(64),
            expiresAt: '2026-01-08T00:00:00.000Z',
            ipAddress: '127.0.0.1',
            userAgent: 'test',
            rememberMe: false,
            method: 'sign-up',
          }),
          // Its place in the user's session index, from which ending all of the user's sessions is decided.
          index: SessionOpened({ userId: 'u1', sessionId: 's1', tokenHash: 'b'.repeat(64), expiresAt: '2026-01-08T00:00:00.000Z' }),
        },
      });
  });

  it('refuses an email that is already reserved', () => {
    given([EmailReserved({ email: 'ada@example.com', userId: 'u0' })]).when(register).thenFails('USER_ALREADY_EXISTS');
  });
});
