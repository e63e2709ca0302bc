import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '@portcullis/platform';
import { accountModel } from '../identity/account.decider.ts';
import { auditSentence } from './audit-sentence.ts';
import { diffStates, foldUpTo, plain, type PointInLog } from './fold-at.ts';

const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo';

function recorded(position: number, occurredAt: string, type: string, data: Record<string, unknown>): RecordedEvent {
  return { position, eventId: `e${position}`, streamId: 'user-u1', streamVersion: position, type, data, metadata: { occurredAt }, recordedAt: new Date(occurredAt) };
}

const history = [
  recorded(3, '2026-01-01T10:00:00.000Z', 'user.registered.v1', { userId: 'u1', email: 'alice@example.com', name: 'Alice', image: null, emailVerified: false }),
  recorded(7, '2026-01-01T11:00:00.000Z', 'user.credential_account_created.v1', { userId: 'u1', accountId: 'a1', passwordHash: HASH }),
  recorded(12, '2026-01-02T09:00:00.000Z', 'user.updated.v1', { userId: 'u1', name: 'Alice Liddell' }),
];

const atPosition = (position: number): PointInLog => ({ position, instant: '2099-01-01T00:00:00.000Z', byInstant: false });
const atInstant = (instant: string): PointInLog => ({ position: Number.MAX_SAFE_INTEGER, instant, byInstant: true });

describe('folding a stream as of a point, with the deciders\' model', () => {
  it('stops at a log position', () => {
    expect(foldUpTo(accountModel, history, atPosition(2))).toEqual({ state: { status: 'none' }, position: 0 });
    expect(foldUpTo(accountModel, history, atPosition(11))).toMatchObject({ state: { name: 'Alice', accounts: [{ accountId: 'a1' }] }, position: 7 });
    expect(foldUpTo(accountModel, history, atPosition(12))).toMatchObject({ state: { name: 'Alice Liddell' }, position: 12 });
  });

  it('stops at an instant: events decided at or before it', () => {
    expect(foldUpTo(accountModel, history, atInstant('2026-01-01T10:59:59.999Z'))).toMatchObject({ state: { name: 'Alice', accounts: [] }, position: 3 });
    expect(foldUpTo(accountModel, history, atInstant('2026-01-01T11:00:00.000Z')).position).toBe(7);
  });

  it('shows states as JSON without password hashes, and diffs two of them leaf by leaf', () => {
    const then = plain(foldUpTo(accountModel, history, atPosition(3)).state);
    const now = plain(foldUpTo(accountModel, history, atPosition(12)).state);
    expect(JSON.stringify(now)).not.toContain('argon2');
    expect(now).toMatchObject({ accounts: [{ accountId: 'a1', providerId: 'credential', passwordHash: '[redacted]' }] });
    expect(plain(new Map([['m1', { roles: new Set(['owner']) }]]))).toEqual({ m1: { roles: ['owner'] } });
    expect(diffStates(then, now)).toEqual([
      { path: 'accounts', before: [], after: [{ accountId: 'a1', providerId: 'credential', providerAccountId: 'u1', passwordHash: '[redacted]', scope: null }] },
      { path: 'name', before: 'Alice', after: 'Alice Liddell' },
    ]);
  });
});

describe('the sentence of an event', () => {
  const labels = new Map([['u1', 'alice@example.com'], ['admin1', 'root@example.com']]);
  it('names users by email, says where from, and who acted on whose behalf', () => {
    expect(auditSentence({ type: 'session.created.v2', data: { userId: 'u1', ipAddress: '203.0.113.7' }, actor: { kind: 'user', id: 'u1' }, ipAddress: '203.0.113.7' }, labels)).toBe(
      'alice@example.com signed in from 203.0.113.7',
    );
    expect(auditSentence({ type: 'user.updated.v1', data: { userId: 'u1' }, actor: { kind: 'admin', id: 'admin1' }, ipAddress: null }, labels)).toBe(
      'root@example.com (as admin) updated the profile of alice@example.com',
    );
    expect(
      auditSentence({ type: 'user.updated.v1', data: { userId: 'u1' }, actor: { kind: 'impersonator', id: 'u1', impersonatorId: 'admin1' }, ipAddress: null }, labels),
    ).toBe('alice@example.com (root@example.com impersonating) updated the profile of alice@example.com');
    expect(auditSentence({ type: 'organization.team_created.v1', data: {}, actor: { kind: 'server', id: null }, ipAddress: '10.0.0.1' }, labels)).toBe(
      'a server (x-api-key): organization team created from 10.0.0.1',
    );
  });

  it('names an organization by its name where it is known, by its id where not', () => {
    const joined = { type: 'organization.member_added.v1', data: { userId: 'u1', organizationId: 'o1', role: 'owner' }, actor: { kind: 'user' as const, id: 'u1' }, ipAddress: null };
    expect(auditSentence(joined, labels, new Map([['o1', 'Acme']]))).toBe('alice@example.com joined organization Acme as owner');
    expect(auditSentence(joined, labels)).toBe('alice@example.com joined organization o1 as owner');
  });

  it('names the admin behind an impersonation in what an admin action done there says', () => {
    const admins = new Map([...labels, ['admin2', 'ops@example.com']]);
    const actor = { kind: 'impersonator', id: 'admin2', impersonatorId: 'admin1' } as const;
    expect(auditSentence({ type: 'user.banned.v1', data: { userId: 'u1', reason: 'spam', expiresAt: null }, actor, ipAddress: null }, admins)).toBe(
      'ops@example.com (root@example.com impersonating) banned alice@example.com (spam)',
    );
    expect(auditSentence({ type: 'user.role_changed.v1', data: { userId: 'u1', role: 'admin' }, actor: { kind: 'admin', id: 'admin1' }, ipAddress: null }, admins)).toBe(
      'root@example.com (as admin) made alice@example.com admin',
    );
  });
});
