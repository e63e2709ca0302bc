import { describe, it } from 'vitest';
import { CredentialAccountCreated, PasswordChanged, PasswordRehashed, UserRegistered, type TimedEvent } from '@portcullis/contracts';
import { foldSpec } from '../decider-spec.test-support.ts';
import { evolveSignInAccount, initialSignInAccount } from './sign-in-account.state.ts';

const folded = foldSpec({ evolve: (state: ReturnType<typeof initialSignInAccount>, timed: TimedEvent) => evolveSignInAccount(state, timed.event, timed), initial: initialSignInAccount });
const at = (occurredAt: string, event: TimedEvent['event']): TimedEvent => ({ event, occurredAt });
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA';
const NEW_HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$bmV3';
const registered = at('2026-01-01T00:00:00.000Z', UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: true }));
const credential = at('2026-01-01T00:00:00.000Z', CredentialAccountCreated({ userId: 'u1', accountId: 'a1', passwordHash: HASH }));
/** As every answer shows the user; a password change is not a change of what it shows. */
const user = {
  id: 'u1',
  email: 'ada@example.com',
  name: 'Ada',
  image: null,
  emailVerified: true,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  role: 'user',
  banned: false,
  banReason: null,
  banExpires: null,
};

describe('the user stream as a password sign-in folds it', () => {
  it('holds the account with its password, and the user as the sign-in answer shows it', () => {
    folded([registered, credential]).then({
      account: { status: 'active', userId: 'u1', email: 'ada@example.com', name: 'Ada', emailVerified: true, accounts: [{ accountId: 'a1', providerId: 'credential', providerAccountId: 'u1', passwordHash: HASH, scope: null }], ban: null },
      passwordChange: null,
      user,
    });
  });

  it('remembers when the password last changed and how, which lifts a lock set before it', () => {
    const reset = at('2026-01-02T00:00:00.000Z', PasswordChanged({ userId: 'u1', accountId: 'a1', passwordHash: NEW_HASH, via: 'reset-password' }));
    folded([registered, credential, reset]).then({
      account: { status: 'active', userId: 'u1', email: 'ada@example.com', name: 'Ada', emailVerified: true, accounts: [{ accountId: 'a1', providerId: 'credential', providerAccountId: 'u1', passwordHash: NEW_HASH, scope: null }], ban: null },
      passwordChange: { at: '2026-01-02T00:00:00.000Z', via: 'reset-password' },
      user,
    });
  });

  it('takes a rehash as the account\'s hash, but not as a change of password: it lifts no lock', () => {
    const cost = { memoryKiB: 19_456, iterations: 2, parallelism: 1 };
    const rehash = at('2026-01-02T00:00:00.000Z', PasswordRehashed({ userId: 'u1', accountId: 'a1', passwordHash: NEW_HASH, previous: 'better-auth-scrypt', cost }));
    folded([registered, credential, rehash]).then({
      account: { status: 'active', userId: 'u1', email: 'ada@example.com', name: 'Ada', emailVerified: true, accounts: [{ accountId: 'a1', providerId: 'credential', providerAccountId: 'u1', passwordHash: NEW_HASH, scope: null }], ban: null },
      passwordChange: null,
      user,
    });
  });
});
