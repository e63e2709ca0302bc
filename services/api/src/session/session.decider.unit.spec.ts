import { describe, it } from 'vitest';
import { SessionCreated, SessionRefreshed, SessionRevoked } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideSession, evolveSession, initialSessionState } from './session.decider.ts';

const given = deciderSpec({ evolve: evolveSession, initial: initialSessionState, decide: decideSession });
const DAY = 24 * 3600;
const created = SessionCreated({
  sessionId: 's1',
  userId: 'u1',
  tokenHash: 'a'.repeat(64),
  expiresAt: '2026-01-08T00:00:00.000Z',
  ipAddress: null,
  userAgent: null,
  rememberMe: true,
  method: 'email-password',
});
const refresh = (now: string) => ({ type: 'refresh' as const, now: new Date(now), expiresInSeconds: 7 * DAY, updateAgeSeconds: DAY });

describe('session decider', () => {
  it('does not refresh before the update age has passed since expiresAt was set', () => {
    given([created]).when(refresh('2026-01-01T23:59:59.000Z')).then([]);
  });

  it('gives a full new lifetime once the update age has passed', () => {
    given([created])
      .when(refresh('2026-01-02T00:00:00.000Z'))
      .then([SessionRefreshed({ sessionId: 's1', userId: 'u1', expiresAt: '2026-01-09T00:00:00.000Z' })]);
  });

  it('measures the update age from the latest refresh', () => {
    given([created, SessionRefreshed({ sessionId: 's1', userId: 'u1', expiresAt: '2026-01-09T00:00:00.000Z' })])
      .when(refresh('2026-01-02T12:00:00.000Z'))
      .then([]);
  });

  it('refuses to refresh an expired session', () => {
    given([created]).when(refresh('2026-01-08T00:00:00.000Z')).thenFails('SESSION_EXPIRED');
  });

  it('refuses to refresh a session that does not exist or has ended', () => {
    given([]).when(refresh('2026-01-02T00:00:00.000Z')).thenFails('SESSION_NOT_FOUND');
    given([created, SessionRevoked({ sessionId: 's1', userId: 'u1', tokenHash: 'a'.repeat(64), reason: 'signed_out' })])
      .when(refresh('2026-01-02T00:00:00.000Z'))
      .thenFails('SESSION_NOT_FOUND');
  });

  it("revokes the owner's session", () => {
    given([created])
      .when({ type: 'revoke', byUserId: 'u1', reason: 'revoked' })
      .then([SessionRevoked({ sessionId: 's1', userId: 'u1', tokenHash: 'a'.repeat(64), reason: 'revoked' })]);
  });

  it("leaves another user's session alone, without telling the caller it exists", () => {
    given([created]).when({ type: 'revoke', byUserId: 'u2', reason: 'revoked' }).then([]);
  });

  it('ends a session once: revoking again decides nothing', () => {
    given([created, SessionRevoked({ sessionId: 's1', userId: 'u1', tokenHash: 'a'.repeat(64), reason: 'signed_out' })])
      .when({ type: 'revoke', byUserId: 'u1', reason: 'revoked_all' })
      .then([]);
  });

  it('expires a session only when its expiresAt has passed', () => {
    given([created]).when({ type: 'expire', now: new Date('2026-01-07T23:59:59.999Z') }).then([]);
    given([created])
      .when({ type: 'expire', now: new Date('2026-01-08T00:00:00.000Z') })
      .then([SessionRevoked({ sessionId: 's1', userId: 'u1', tokenHash: 'a'.repeat(64), reason: 'expired' })]);
  });
});
