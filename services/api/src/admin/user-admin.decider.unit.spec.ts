import { describe, it, expect } from 'vitest';
import { CredentialAccountCreated, EmailReserved, UserBanned, UserDeleted, UserRegistered, UserRoleChanged, UserUnbanned } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.ts';
import { decideAdminUser, decideCreateUser, evolveAdminUser, initialAdminUserState } from './user-admin.decider.ts';

const given = deciderSpec({ evolve: evolveAdminUser, initial: initialAdminUserState, decide: decideAdminUser });
const registered = UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: false });
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA';

describe('admin user decider', () => {
  it('sets a role, several stored comma-separated as given', () => {
    given([registered]).when({ type: 'set-role', role: 'admin,user' }).then([UserRoleChanged({ userId: 'u1', role: 'admin,user' })]);
  });

  it('bans with a reason and an expiry, or until unbanned', () => {
    const expiresAt = '2030-01-01T00:00:00.000Z';
    given([registered])
      .when({ type: 'ban', byUserId: 'admin', reason: 'spam', expiresAt })
      .then([UserBanned({ userId: 'u1', reason: 'spam', expiresAt })]);
    given([registered])
      .when({ type: 'ban', byUserId: 'admin', reason: 'No reason', expiresAt: null })
      .then([UserBanned({ userId: 'u1', reason: 'No reason', expiresAt: null })]);
  });

  it('refuses an admin banning themself', () => {
    given([registered]).when({ type: 'ban', byUserId: 'u1', reason: 'x', expiresAt: null }).thenFails('YOU_CANNOT_BAN_YOURSELF');
  });

  it('unbans, recorded as an admin action', () => {
    given([registered, UserBanned({ userId: 'u1', reason: 'spam', expiresAt: null })])
      .when({ type: 'unban' })
      .then([UserUnbanned({ userId: 'u1', reason: 'admin' })]);
  });

  it('finds no user before registration or after deletion', () => {
    given([]).when({ type: 'unban' }).thenFails('USER_NOT_FOUND');
    given([registered, UserDeleted({ userId: 'u1', email: 'ada@example.com' })]).when({ type: 'set-role', role: 'admin' }).thenFails('USER_NOT_FOUND');
  });

  it('folds role and ban', () => {
    const state = [registered, UserRoleChanged({ userId: 'u1', role: 'admin' }), UserBanned({ userId: 'u1', reason: 'r', expiresAt: null })].reduce(
      evolveAdminUser,
      initialAdminUserState(),
    );
    expect(state).toEqual({ status: 'registered', userId: 'u1', role: 'admin', banned: true });
  });
});

describe('admin user creation', () => {
  const command = { userId: 'u2', email: 'bob@example.com', name: 'Bob', image: null, emailVerified: true, credential: { accountId: 'a2', passwordHash: HASH }, role: 'admin' };

  it('reserves the address and registers the user with password account and role', () => {
    expect(decideCreateUser(command, { status: 'free' })).toEqual({
      reservation: [EmailReserved({ email: 'bob@example.com', userId: 'u2' })],
      user: [
        UserRegistered({ userId: 'u2', email: 'bob@example.com', name: 'Bob', image: null, emailVerified: true }),
        CredentialAccountCreated({ userId: 'u2', accountId: 'a2', passwordHash: HASH }),
        UserRoleChanged({ userId: 'u2', role: 'admin' }),
      ],
    });
  });

  it('needs no event for the default role, nor a password account without a password', () => {
    expect(decideCreateUser({ ...command, credential: null, role: 'user' }, { status: 'free' }).user).toEqual([
      UserRegistered({ userId: 'u2', email: 'bob@example.com', name: 'Bob', image: null, emailVerified: true }),
    ]);
  });

  it('refuses a taken address with better-auth admin message', () => {
    expect(() => decideCreateUser(command, { status: 'reserved', userId: 'other' })).toThrow('User already exists. Use another email.');
  });
});
