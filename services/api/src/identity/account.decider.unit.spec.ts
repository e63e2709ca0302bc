import { describe, expect, it } from 'vitest';
import {
  AccountUnlinked,
  CredentialAccountCreated,
  ProviderAccountLinked,
  ProviderTokensUpdated,
  EmailChanged,
  EmailReleased,
  EmailReserved,
  EmailVerified,
  PasswordChanged,
  PasswordRehashed,
  UserDeleted,
  UserBanned,
  UserRegistered,
  UserUnbanned,
} from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideAccount, decideEmailMove, decideEmailRelease, decideSignInBan, evolveAccount, initialAccountState } from './account.decider.ts';

const given = deciderSpec({ evolve: evolveAccount, initial: initialAccountState, decide: decideAccount });
const hash = (n: number): string => `$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaC${n}`;
const registered = UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: false });
const credential = CredentialAccountCreated({ userId: 'u1', accountId: 'a1', passwordHash: hash(1) });
const deleted = UserDeleted({ userId: 'u1', email: 'ada@example.com' });
const noTokens = { accessToken: null, refreshToken: null, idToken: null, accessTokenExpiresAt: null, refreshTokenExpiresAt: null };
const linked = ProviderAccountLinked({ userId: 'u1', accountId: 'g1', providerId: 'github', providerAccountId: '4242', scope: 'read:user,user:email', ...noTokens });

describe('account decider', () => {
  it('verifies the email the link was sent to, once', () => {
    given([registered]).when({ type: 'verify-email', email: 'ada@example.com' }).then([EmailVerified({ userId: 'u1', email: 'ada@example.com' })]);
    given([registered, EmailVerified({ userId: 'u1', email: 'ada@example.com' })]).when({ type: 'verify-email', email: 'ada@example.com' }).then([]);
  });

  it('refuses a verification link for an address the user no longer has', () => {
    const moved = EmailChanged({ userId: 'u1', previousEmail: 'ada@example.com', email: 'ada@new.example', emailVerified: false });
    given([registered, moved]).when({ type: 'verify-email', email: 'ada@example.com' }).thenFails('INVALID_TOKEN');
    given([]).when({ type: 'verify-email', email: 'ada@example.com' }).thenFails('USER_NOT_FOUND');
  });

  it('changes the password of the credential account, and needs one', () => {
    given([registered, credential])
      .when({ type: 'change-password', passwordHash: hash(2) })
      .then([PasswordChanged({ userId: 'u1', accountId: 'a1', passwordHash: hash(2), via: 'change-password' })]);
    given([registered]).when({ type: 'change-password', passwordHash: hash(2) }).thenFails('CREDENTIAL_ACCOUNT_NOT_FOUND');
  });

  it('replaces a dated hash with the one a sign-in made, unless the hash changed since the sign-in proved it', () => {
    const scrypt = `${'ab'.repeat(16)}:${'cd'.repeat(64)}`;
    const imported = CredentialAccountCreated({ userId: 'u1', accountId: 'a1', passwordHash: hash(1) });
    const cost = { memoryKiB: 19_456, iterations: 2, parallelism: 1 };
    const rehash = { type: 'rehash-password', replacing: hash(1), passwordHash: hash(2), previous: 'argon2', cost } as const;
    given([registered, imported]).when(rehash).then([PasswordRehashed({ userId: 'u1', accountId: 'a1', passwordHash: hash(2), previous: 'argon2', cost })]);
    // A change of password between the sign-in's check and its append: the rehash of the old one is void.
    const changed = PasswordChanged({ userId: 'u1', accountId: 'a1', passwordHash: hash(3), via: 'change-password' });
    given([registered, imported, changed]).when(rehash).then([]);
    given([registered]).when({ ...rehash, replacing: scrypt, previous: 'better-auth-scrypt' }).then([]);
  });

  it('folds a rehash as the credential account\'s hash', () => {
    const rehashed = PasswordRehashed({ userId: 'u1', accountId: 'a1', passwordHash: hash(2), previous: 'better-auth-scrypt', cost: { memoryKiB: 19_456, iterations: 2, parallelism: 1 } });
    const state = [registered, credential, rehashed].reduce(evolveAccount, initialAccountState());
    expect(state.status === 'active' && state.accounts).toEqual([{ accountId: 'a1', providerId: 'credential', providerAccountId: 'u1', passwordHash: hash(2), scope: null }]);
  });

  it('resets a password, creating the credential account for a user without one', () => {
    given([registered, credential])
      .when({ type: 'reset-password', passwordHash: hash(2), newAccountId: 'a2' })
      .then([PasswordChanged({ userId: 'u1', accountId: 'a1', passwordHash: hash(2), via: 'reset-password' })]);
    given([registered])
      .when({ type: 'reset-password', passwordHash: hash(2), newAccountId: 'a2' })
      .then([CredentialAccountCreated({ userId: 'u1', accountId: 'a2', passwordHash: hash(2) })]);
  });

  it('sets a first password only', () => {
    given([registered])
      .when({ type: 'set-password', passwordHash: hash(3), newAccountId: 'a3' })
      .then([CredentialAccountCreated({ userId: 'u1', accountId: 'a3', passwordHash: hash(3) })]);
    given([registered, credential]).when({ type: 'set-password', passwordHash: hash(3), newAccountId: 'a3' }).thenFails('PASSWORD_ALREADY_SET');
  });

  it('changes the email to a different one', () => {
    given([registered])
      .when({ type: 'change-email', newEmail: 'ada@new.example', verified: false })
      .then([EmailChanged({ userId: 'u1', previousEmail: 'ada@example.com', email: 'ada@new.example', emailVerified: false })]);
    given([registered]).when({ type: 'change-email', newEmail: 'ada@example.com', verified: false }).thenFails('EMAIL_IS_THE_SAME');
  });

  it('deletes a user once; a deleted user is not found', () => {
    given([registered, credential]).when({ type: 'delete' }).then([deleted]);
    given([registered, credential, deleted]).when({ type: 'delete' }).thenFails('USER_NOT_FOUND');
    given([registered, deleted]).when({ type: 'change-password', passwordHash: hash(2) }).thenFails('USER_NOT_FOUND');
  });

  it('folds the lifecycle into the state', () => {
    const state = [
      registered,
      credential,
      EmailVerified({ userId: 'u1', email: 'ada@example.com' }),
      PasswordChanged({ userId: 'u1', accountId: 'a1', passwordHash: hash(2), via: 'change-password' }),
    ].reduce(evolveAccount, initialAccountState());
    expect(state).toEqual({
      status: 'active',
      userId: 'u1',
      email: 'ada@example.com',
      name: 'Ada',
      emailVerified: true,
      accounts: [{ accountId: 'a1', providerId: 'credential', providerAccountId: 'u1', passwordHash: hash(2), scope: null }],
      ban: null,
    });
  });

  it('holds provider accounts beside the password one, with the scopes granted last', () => {
    const state = [
      registered,
      credential,
      linked,
      ProviderTokensUpdated({ userId: 'u1', accountId: 'g1', providerId: 'github', ...noTokens, scope: 'read:user,user:email,repo' }),
    ].reduce(evolveAccount, initialAccountState());
    expect(state.status === 'active' && state.accounts).toEqual([
      { accountId: 'a1', providerId: 'credential', providerAccountId: 'u1', passwordHash: hash(1), scope: null },
      { accountId: 'g1', providerId: 'github', providerAccountId: '4242', passwordHash: null, scope: 'read:user,user:email,repo' },
    ]);
  });

  it('unlinks the account named by its id, or by provider (and provider account id), never the last one', () => {
    const unlinked = [AccountUnlinked({ userId: 'u1', accountId: 'g1', providerId: 'github' })];
    given([registered, credential, linked]).when({ type: 'unlink', providerId: undefined, accountId: 'g1' }).then(unlinked);
    given([registered, credential, linked]).when({ type: 'unlink', providerId: 'github', accountId: '4242' }).then(unlinked);
    given([registered, credential, linked]).when({ type: 'unlink', providerId: 'github', accountId: undefined }).then(unlinked);
    given([registered, credential, linked]).when({ type: 'unlink', providerId: 'github', accountId: 'nope' }).thenFails('ACCOUNT_NOT_FOUND');
    given([registered, credential, linked, ...unlinked]).when({ type: 'unlink', providerId: 'credential', accountId: undefined }).thenFails('FAILED_TO_UNLINK_LAST_ACCOUNT');
    given([registered]).when({ type: 'unlink', providerId: 'github', accountId: undefined }).thenFails('ACCOUNT_NOT_FOUND');
  });

  it('takes a password from a user who signs in with a provider only when asked (set-password), and changes none', () => {
    given([registered, linked]).when({ type: 'change-password', passwordHash: hash(2) }).thenFails('CREDENTIAL_ACCOUNT_NOT_FOUND');
    given([registered, linked])
      .when({ type: 'set-password', passwordHash: hash(2), newAccountId: 'a2' })
      .then([CredentialAccountCreated({ userId: 'u1', accountId: 'a2', passwordHash: hash(2) })]);
  });

  it('refuses a banned user a session until the ban expires, lifting an expired one in the sign-in', () => {
    const now = new Date('2026-05-01T12:00:00.000Z');
    const active = (events: Parameters<typeof evolveAccount>[1][]) => {
      const state = [registered, ...events].reduce(evolveAccount, initialAccountState());
      if (state.status !== 'active') throw new Error('not active');
      return state;
    };
    expect(decideSignInBan(active([]), now)).toEqual({ outcome: 'free', events: [] });
    expect(decideSignInBan(active([UserBanned({ userId: 'u1', reason: 'spam', expiresAt: null })]), now)).toEqual({ outcome: 'banned' });
    const until = (iso: string) => active([UserBanned({ userId: 'u1', reason: 'spam', expiresAt: iso })]);
    expect(decideSignInBan(until('2026-05-01T12:00:01.000Z'), now)).toEqual({ outcome: 'banned' });
    // better-auth lifts it once banExpires is strictly behind the clock.
    expect(decideSignInBan(until('2026-05-01T12:00:00.000Z'), now)).toEqual({ outcome: 'banned' });
    expect(decideSignInBan(until('2026-05-01T11:59:59.999Z'), now)).toEqual({ outcome: 'free', events: [UserUnbanned({ userId: 'u1', reason: 'expired' })] });
    expect(decideSignInBan(active([UserBanned({ userId: 'u1', reason: 'spam', expiresAt: null }), UserUnbanned({ userId: 'u1', reason: 'admin' })]), now)).toEqual({
      outcome: 'free',
      events: [],
    });
  });

  it('moves a reservation to a free address only', () => {
    expect(decideEmailMove({ userId: 'u1', from: 'a@x.test', to: 'b@x.test' }, { status: 'reserved', userId: 'u1' }, { status: 'free' })).toEqual({
      released: [EmailReleased({ email: 'a@x.test', userId: 'u1' })],
      reserved: [EmailReserved({ email: 'b@x.test', userId: 'u1' })],
    });
    expect(() =>
      decideEmailMove({ userId: 'u1', from: 'a@x.test', to: 'b@x.test' }, { status: 'reserved', userId: 'u1' }, { status: 'reserved', userId: 'u2' }),
    ).toThrow("Couldn't update your email");
    expect(decideEmailRelease({ userId: 'u1', email: 'a@x.test' }, { status: 'reserved', userId: 'u2' })).toEqual([]);
  });
});
