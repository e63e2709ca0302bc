// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { flattenState, isUnder, userSummary } from './state.ts';

const userState = (banned: boolean) => ({
  profile: { status: 'registered', name: 'Ann', email: 'ann@example.com' },
  account: { status: 'active', ban: banned ? { expiresAt: null } : null, accounts: [{ providerId: 'credential', passwordHash: '[redacted]' }] },
  role: 'user',
  banned,
  sessions: banned ? {} : { s1: { expiresAt: '2030-01-01T00:00:00.000Z' } },
  organizations: { o1: { name: 'Acme', role: 'owner' } },
});

describe('a time-travel state as rows', () => {
  it('flattens objects leaf by leaf in key order, with the paths the api diffs by', () => {
    expect(flattenState(userState(false))).toEqual([
      { path: 'account.accounts', value: [{ providerId: 'credential', passwordHash: '[redacted]' }] },
      { path: 'account.ban', value: null },
      { path: 'account.status', value: 'active' },
      { path: 'banned', value: false },
      { path: 'organizations.o1.name', value: 'Acme' },
      { path: 'organizations.o1.role', value: 'owner' },
      { path: 'profile.email', value: 'ann@example.com' },
      { path: 'profile.name', value: 'Ann' },
      { path: 'profile.status', value: 'registered' },
      { path: 'role', value: 'user' },
      { path: 'sessions.s1.expiresAt', value: '2030-01-01T00:00:00.000Z' },
    ]);
    expect(flattenState({ sessions: {} })).toEqual([{ path: 'sessions', value: {} }]);
    expect(flattenState(null)).toEqual([{ path: '.', value: null }]);
  });

  it('marks a row under a changed path, and a changed path under a row', () => {
    const changed = new Set(['account.ban', 'sessions.s1']);
    expect(isUnder('account.ban', changed)).toBe(true);
    expect(isUnder('account.ban.expiresAt', changed)).toBe(true);
    expect(isUnder('sessions', changed)).toBe(true);
    expect(isUnder('account.banned', changed)).toBe(false);
    expect(isUnder('role', changed)).toBe(false);
  });

  it('summarises a user: names, role, ban, live sessions, organizations', () => {
    expect(userSummary(userState(true))).toEqual({
      exists: true,
      name: 'Ann',
      email: 'ann@example.com',
      role: 'user',
      banned: true,
      sessions: 0,
      organizations: [{ id: 'o1', name: 'Acme', role: 'owner' }],
    });
    expect(userSummary(userState(false)).banned).toBe(false);
    expect(userSummary({ profile: { status: 'none' }, banned: null, role: null })).toMatchObject({ exists: false, banned: null, sessions: 0, organizations: [] });
  });
});
