import { describe, it, expect } from 'vitest';
import { CredentialAccountCreated, EmailReserved, UserBanned, UserDeleted, UserRegistered, UserRoleChanged, UserUnbanned } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideAdminUser, decideCreateUser, evolveAdminUser, initialAdminUserState } from './user-admin.decider.ts';

const given = deciderSpec({ evolve: evolveAdminUser, initial: initialAdminUserState, decide: decideAdminUser });
const registered = UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: false });
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA';

/** A role admin (`admin` role, not listed) and the listed root admin of a deployment with ADMIN_USER_IDS=root. */
const roleAdmin = { userId: 'admin', adminUserIds: ['root'] };
const root = { userId: 'root', adminUserIds: ['root'] };

describe('admin user decider', () => {
  it('sets a role, several stored comma-separated as given', () => {
    given([registered]).when({ type: 'set-role', by: roleAdmin, role: 'admin,user' }).then([UserRoleChanged({ userId: 'u1', role: 'admin,user' })]);
  });

  it('bans with a reason and an expiry, or until unbanned', () => {
    const expiresAt = '2030-01-01T00:00:00.000Z';
    given([registered])
      .when({ type: 'ban', by: roleAdmin, reason: 'spam', expiresAt })
      .then([UserBanned({ userId: 'u1', reason: 'spam', expiresAt })]);
    given([registered])
      .when({ type: 'ban', by: roleAdmin, reason: 'No reason', expiresAt: null })
      .then([UserBanned({ userId: 'u1', reason: 'No reason', expiresAt: null })]);
  });

  it('refuses an admin banning themself, the listed root admin too', () => {
    given([registered]).when({ type: 'ban', by: { userId: 'u1', adminUserIds: [] }, reason: 'x', expiresAt: null }).thenFails('YOU_CANNOT_BAN_YOURSELF');
    given([UserRegistered({ userId: 'root', email: 'r@example.com', name: 'R', image: null, emailVerified: true })])
      .when({ type: 'ban', by: root, reason: 'x', expiresAt: null })
      .thenFails('YOU_CANNOT_BAN_YOURSELF');
  });

  it('unbans, recorded as an admin action', () => {
    given([registered, UserBanned({ userId: 'u1', reason: 'spam', expiresAt: null })])
      .when({ type: 'unban', by: roleAdmin })
      .then([UserUnbanned({ userId: 'u1', reason: 'admin' })]);
  });

  it('finds no user before registration or after deletion', () => {
    given([]).when({ type: 'unban', by: roleAdmin }).thenFails('USER_NOT_FOUND');
    given([registered, UserDeleted({ userId: 'u1', email: 'ada@example.com' })]).when({ type: 'set-role', by: roleAdmin, role: 'admin' }).thenFails('USER_NOT_FOUND');
  });

  it('lets a role admin act on non-admins only, and the listed root admin on admins too', () => {
    const otherAdmin = [registered, UserRoleChanged({ userId: 'u1', role: 'user,admin' })];
    for (const command of [
      { type: 'set-role', by: roleAdmin, role: 'user' },
      { type: 'ban', by: roleAdmin, reason: 'x', expiresAt: null },
      { type: 'unban', by: roleAdmin },
    ] as const) {
      given(otherAdmin).when(command).thenFails('YOU_CANNOT_ACT_ON_ADMINS');
      given(otherAdmin).when({ ...command, by: root }).then([expect.objectContaining({ data: expect.objectContaining({ userId: 'u1' }) })]);
    }
    // A listed admin is an admin whatever its role says.
    const listedRoot = [UserRegistered({ userId: 'root', email: 'r@example.com', name: 'R', image: null, emailVerified: true })];
    given(listedRoot).when({ type: 'ban', by: roleAdmin, reason: 'x', expiresAt: null }).thenFails('YOU_CANNOT_ACT_ON_ADMINS');
    given(listedRoot).when({ type: 'ban', by: { userId: 'root2', adminUserIds: ['root', 'root2'] }, reason: 'x', expiresAt: null })
      .then([UserBanned({ userId: 'root', reason: 'x', expiresAt: null })]);
  });

  it('refuses a role admin taking their own admin role away, but not a listed admin, whose rights stay', () => {
    const self = { userId: 'u1', adminUserIds: [] };
    const admin = [registered, UserRoleChanged({ userId: 'u1', role: 'admin' })];
    given(admin).when({ type: 'set-role', by: self, role: 'user' }).thenFails('YOU_CANNOT_REMOVE_YOUR_OWN_ADMIN_ROLE');
    given(admin).when({ type: 'set-role', by: self, role: 'admin,user' }).then([UserRoleChanged({ userId: 'u1', role: 'admin,user' })]);
    given(admin).when({ type: 'set-role', by: { userId: 'u1', adminUserIds: ['u1'] }, role: 'user' }).then([UserRoleChanged({ userId: 'u1', role: 'user' })]);
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
