import { describe, it } from 'vitest';
import { ImpersonationStarted, SessionCreated, SessionRefreshed, SessionRevoked, type TimedEvent } from '@portcullis/contracts';
import { foldSpec } from '../decider-spec.test-support.ts';
import { evolveSessionAnswerState, initialSessionAnswer } from './session-answer.state.ts';

const folded = foldSpec({ evolve: (state: ReturnType<typeof initialSessionAnswer>, timed: TimedEvent) => evolveSessionAnswerState(state, timed.event, timed), initial: initialSessionAnswer });
const at = (occurredAt: string, event: TimedEvent['event']): TimedEvent => ({ event, occurredAt });
const HASH = 'a'.repeat(64);
const T0 = '2026-01-01T00:00:00.000Z';
const created = at(T0, SessionCreated({ sessionId: 's1', userId: 'u1', tokenHash: HASH, expiresAt: '2026-01-08T00:00:00.000Z', ipAddress: '203.0.113.7', userAgent: 'curl', rememberMe: true, method: 'email-password' }));
const session = (expiresAt: string, updatedAt: string, extra: object = {}) => ({
  id: 's1',
  userId: 'u1',
  expiresAt,
  createdAt: T0,
  updatedAt,
  ipAddress: '203.0.113.7',
  userAgent: 'curl',
  activeOrganizationId: null,
  activeTeamId: null,
  rememberMe: true,
  impersonatedBy: null,
  ...extra,
});

describe('a session stream as get-session answers it', () => {
  it('answers the session with the token hash it was created for, refreshed as the log says', () => {
    folded([created]).then({ tokenHash: HASH, session: session('2026-01-08T00:00:00.000Z', T0) });
    const refreshed = at('2026-01-02T00:00:00.000Z', SessionRefreshed({ sessionId: 's1', userId: 'u1', expiresAt: '2026-01-09T00:00:00.000Z' }));
    folded([created, refreshed]).then({ tokenHash: HASH, session: session('2026-01-09T00:00:00.000Z', '2026-01-02T00:00:00.000Z') });
  });

  it('answers no session once it has ended, though the hash stays the stream\'s', () => {
    const revoked = at('2026-01-02T00:00:00.000Z', SessionRevoked({ sessionId: 's1', userId: 'u1', tokenHash: HASH, reason: 'signed_out' }));
    folded([created, revoked]).then({ tokenHash: HASH, session: null });
    folded([]).then({ tokenHash: null, session: null });
  });

  it('answers an impersonation session as never remembered, naming the admin', () => {
    const started = at(T0, ImpersonationStarted({ sessionId: 's1', userId: 'u1', tokenHash: HASH, expiresAt: '2026-01-01T01:00:00.000Z', ipAddress: '203.0.113.7', userAgent: 'curl', impersonatedBy: 'admin' }));
    folded([started]).then({ tokenHash: HASH, session: session('2026-01-01T01:00:00.000Z', T0, { rememberMe: false, impersonatedBy: 'admin' }) });
  });
});
