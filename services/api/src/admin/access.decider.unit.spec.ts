import { describe, expect, it } from 'vitest';
import { hasAdminPermission, isAdminUser } from './access.decider.ts';

const check = (role: string | null, permissions: Record<string, string[]>, userId = 'u1', adminUserIds: string[] = []) =>
  hasAdminPermission({ userId, role, adminUserIds, permissions });

describe('admin access control (better-auth defaultStatements, adminAc, userAc)', () => {
  it('grants the admin role every user and session action but impersonating admins', () => {
    expect(check('admin', { user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'delete', 'set-password', 'get', 'update'] })).toBe(true);
    expect(check('admin', { session: ['list', 'revoke', 'delete'] })).toBe(true);
    expect(check('admin', { user: ['impersonate-admins'] })).toBe(false);
  });

  it('grants the user role (and no role) nothing', () => {
    expect(check('user', { user: ['list'] })).toBe(false);
    expect(check(null, { session: ['list'] })).toBe(false);
  });

  it('needs every action of every resource asked (AND), from one role', () => {
    expect(check('admin', { user: ['list'], session: ['revoke'] })).toBe(true);
    expect(check('admin', { user: ['list'], project: ['create'] })).toBe(false);
    expect(check('admin', {})).toBe(false);
  });

  it('is enough that one of several comma-separated roles grants it', () => {
    expect(check('user,admin', { user: ['ban'] })).toBe(true);
    expect(check('user,editor', { user: ['ban'] })).toBe(false);
  });

  it('passes a configured admin user id whatever its role asks', () => {
    expect(check('user', { user: ['impersonate-admins'] }, 'root', ['root'])).toBe(true);
  });

  it('does not take inherited object keys for roles or resources', () => {
    expect(check('constructor', { user: ['list'] })).toBe(false);
    expect(check('admin', { toString: [] })).toBe(false);
  });

  it('counts admin-role holders and admin user ids as admins for impersonation', () => {
    expect(isAdminUser({ id: 'a', role: 'user,admin' }, [])).toBe(true);
    expect(isAdminUser({ id: 'a', role: 'user' }, ['a'])).toBe(true);
    expect(isAdminUser({ id: 'a', role: 'user' }, [])).toBe(false);
  });
});
