import { describe, it } from 'vitest';
import { SessionExtended, SessionOpened, SessionRevoked, SessionsClosed, type TimedEvent } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideEndSessions, evolveSessionIndex, initialSessionIndex, type EndSessions } from './session-index.decider.ts';

const given = deciderSpec({
  evolve: (state: ReturnType<typeof initialSessionIndex>, timed: TimedEvent) => evolveSessionIndex(state, timed.event, timed),
  initial: initialSessionIndex,
  decide: decideEndSessions,
});

const hashOf = (id: string): string => id.padEnd(64, '0').replace(/[^0-9a-f]/g, 'a');
const at = (occurredAt: string, event: TimedEvent['event']): TimedEvent => ({ event, occurredAt });
const opened = (sessionId: string, expiresAt: string, occurredAt = '2026-01-01T00:00:00.000Z'): TimedEvent =>
  at(occurredAt, SessionOpened({ userId: 'u1', sessionId, tokenHash: hashOf(sessionId), expiresAt }));
const endAll = (now: string, extra: Partial<EndSessions> = {}): EndSessions => ({ userId: 'u1', reason: 'password_reset', now: new Date(now), ...extra });
const revoked = (sessionId: string, reason: EndSessions['reason'] = 'password_reset') =>
  SessionRevoked({ sessionId, userId: 'u1', tokenHash: hashOf(sessionId), reason });

describe('session index decider', () => {
  it('ends every session the user opened, naming each token hash, and closes them in the index', () => {
    given([opened('s1', '2026-01-08T00:00:00.000Z'), opened('s2', '2026-01-08T00:00:00.000Z')])
      .when(endAll('2026-01-02T00:00:00.000Z'))
      .then({ index: [SessionsClosed({ userId: 'u1', sessionIds: ['s1', 's2'] })], revocations: [revoked('s1'), revoked('s2')] });
  });

  it('leaves the caller its own session when told to (revoke-other-sessions)', () => {
    given([opened('s1', '2026-01-08T00:00:00.000Z'), opened('s2', '2026-01-08T00:00:00.000Z')])
      .when(endAll('2026-01-02T00:00:00.000Z', { except: 's1', reason: 'revoked_others' }))
      .then({ index: [SessionsClosed({ userId: 'u1', sessionIds: ['s2'] })], revocations: [revoked('s2', 'revoked_others')] });
  });

  it('does not end again what was closed, and decides nothing when nothing is open', () => {
    given([opened('s1', '2026-01-08T00:00:00.000Z'), at('2026-01-01T01:00:00.000Z', SessionsClosed({ userId: 'u1', sessionIds: ['s1'] }))])
      .when(endAll('2026-01-02T00:00:00.000Z'))
      .then({ index: [], revocations: [] });
  });

  it('only closes in the index a session past its expiry: it is over already', () => {
    given([opened('s1', '2026-01-02T00:00:00.000Z'), opened('s2', '2026-01-08T00:00:00.000Z')])
      .when(endAll('2026-01-03T00:00:00.000Z'))
      .then({ index: [SessionsClosed({ userId: 'u1', sessionIds: ['s1', 's2'] })], revocations: [revoked('s2')] });
  });

  it('ends a refreshed session that its first expiry would have let go', () => {
    given([
      opened('s1', '2026-01-02T00:00:00.000Z'),
      at('2026-01-01T12:00:00.000Z', SessionExtended({ userId: 'u1', sessionId: 's1', expiresAt: '2026-01-09T00:00:00.000Z' })),
    ])
      .when(endAll('2026-01-03T00:00:00.000Z'))
      .then({ index: [SessionsClosed({ userId: 'u1', sessionIds: ['s1'] })], revocations: [revoked('s1')] });
  });

  it('forgets sessions long expired as the log moves on, so the state stays as small as the live sessions', () => {
    given([
      opened('old', '2026-01-02T00:00:00.000Z'),
      // A later event, well past the old session's expiry (beyond the clock-skew margin).
      opened('new', '2026-02-08T00:00:00.000Z', '2026-02-01T00:00:00.000Z'),
    ])
      .when(endAll('2026-02-02T00:00:00.000Z'))
      .then({ index: [SessionsClosed({ userId: 'u1', sessionIds: ['new'] })], revocations: [revoked('new')] });
  });
});
