import { describe, it } from 'vitest';
import { ImpersonationOpened, ImpersonationsClosed, type TimedEvent } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideCloseImpersonations, evolveImpersonationIndex, initialImpersonationIndex } from './impersonation-index.decider.ts';

const given = deciderSpec({
  evolve: (state: ReturnType<typeof initialImpersonationIndex>, timed: TimedEvent) => evolveImpersonationIndex(state, timed.event, timed),
  initial: initialImpersonationIndex,
  decide: decideCloseImpersonations,
});

const hashOf = (id: string): string => id.padEnd(64, '0').replace(/[^0-9a-f]/g, 'a');
const at = (occurredAt: string, event: TimedEvent['event']): TimedEvent => ({ event, occurredAt });
const opened = (sessionId: string, userId: string, expiresAt: string, occurredAt = '2026-01-01T00:00:00.000Z'): TimedEvent =>
  at(occurredAt, ImpersonationOpened({ adminId: 'admin', userId, sessionId, tokenHash: hashOf(sessionId), expiresAt }));
const entry = (sessionId: string, userId: string, expiresAt: string) => ({ userId, sessionId, tokenHash: hashOf(sessionId), expiresAt });
const closeAt = (now: string) => ({ adminId: 'admin', now: new Date(now) });

describe('impersonation index decider', () => {
  it('closes every impersonation session the admin opened, and names the live ones to end', () => {
    given([opened('s1', 'u1', '2026-01-01T01:00:00.000Z'), opened('s2', 'u2', '2026-01-01T01:00:00.000Z')])
      .when(closeAt('2026-01-01T00:30:00.000Z'))
      .then({
        index: [ImpersonationsClosed({ adminId: 'admin', sessionIds: ['s1', 's2'] })],
        live: [entry('s1', 'u1', '2026-01-01T01:00:00.000Z'), entry('s2', 'u2', '2026-01-01T01:00:00.000Z')],
      });
  });

  it('only closes one past its expiry, and decides nothing when nothing is open', () => {
    given([opened('s1', 'u1', '2026-01-01T01:00:00.000Z'), opened('s2', 'u2', '2026-01-01T03:00:00.000Z')])
      .when(closeAt('2026-01-01T02:00:00.000Z'))
      .then({ index: [ImpersonationsClosed({ adminId: 'admin', sessionIds: ['s1', 's2'] })], live: [entry('s2', 'u2', '2026-01-01T03:00:00.000Z')] });
    given([opened('s1', 'u1', '2026-01-01T01:00:00.000Z'), at('2026-01-01T00:10:00.000Z', ImpersonationsClosed({ adminId: 'admin', sessionIds: ['s1'] }))])
      .when(closeAt('2026-01-01T00:20:00.000Z'))
      .then({ index: [], live: [] });
  });

  it('forgets impersonations long expired as the log moves on', () => {
    given([opened('old', 'u1', '2026-01-01T01:00:00.000Z'), opened('new', 'u2', '2026-01-03T01:00:00.000Z', '2026-01-03T00:00:00.000Z')])
      .when(closeAt('2026-01-03T00:30:00.000Z'))
      .then({ index: [ImpersonationsClosed({ adminId: 'admin', sessionIds: ['new'] })], live: [entry('new', 'u2', '2026-01-03T01:00:00.000Z')] });
  });
});
