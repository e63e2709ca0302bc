import { describe, it, expect } from 'vitest';
import { UserBanned, UserDeleted, UserRegistered, UserRoleChanged, UserUnbanned } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideAdminUser, decideCreatedUserRights, evolveAdminUser, initialAdminUserState } from './user-admin.decider.ts';

const given = deciderSpec({ evolve: evolveAdminUser, initial: initialAdminUserState, decide: decideAdminUser });
const registered = UserRegistered({ userId: 'u1', email: 'ada@example.com', name: 'Ada', image: null, emailVerified: false });

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
  it('adds the role to the registration, none for the default one', () => {
    expect(decideCreatedUserRights({ userId: 'u2', role: 'admin', ban: null })).toEqual([UserRoleChanged({ userId: 'u2', role: 'admin' })]);
    expect(decideCreatedUserRights({ userId: 'u2', role: 'user', ban: null })).toEqual([]);
    expect(decideCreatedUserRights({ userId: 'u2', role: null, ban: null })).toEqual([]);
  });

  it('bans from the start, under the rule for admins acting on admins', () => {
    const ban = { by: roleAdmin, reason: 'spam', expiresAt: null };
    expect(decideCreatedUserRights({ userId: 'u2', role: null, ban })).toEqual([UserBanned({ userId: 'u2', reason: 'spam', expiresAt: null })]);
    expect(() => decideCreatedUserRights({ userId: 'u2', role: 'admin', ban })).toThrow('You cannot act on admins');
    expect(decideCreatedUserRights({ userId: 'u2', role: 'admin', ban: { ...ban, by: root } })).toEqual([
      UserRoleChanged({ userId: 'u2', role: 'admin' }),
      UserBanned({ userId: 'u2', reason: 'spam', expiresAt: null }),
    ]);
  });
});
