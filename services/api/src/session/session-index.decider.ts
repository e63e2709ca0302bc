import {
  SessionExtended,
  SessionOpened,
  SessionsClosed,
  type DomainEvent,
  type SessionEndReason,
  type SessionRevoked,
} from '@portcullis/contracts';
import type { EventTime, StreamModel } from '@portcullis/contracts';
import { revocationOf } from './session.decider.ts';

/** A session the index holds as possibly live: it was opened and has not been closed. */
export interface IndexedSession {
  readonly sessionId: string;
  readonly tokenHash: string;
  readonly expiresAt: string;
}

/**
 * The user's possibly live sessions, from `user-sessions-<userId>`. Sessions that expired without anyone
 * ending them are dropped once their expiry is well behind the log's own clock (the time of the event
 * being folded), so the state stays as small as the set of live sessions however long the stream grows.
 * The margin covers clocks of api processes that run behind: a refresh is refused once a session has
 * expired, so a session past it by more cannot come back.
 */
export interface SessionIndexState {
  readonly userId: string | null;
  readonly open: readonly IndexedSession[];
}

const EXPIRED_SESSION_MARGIN_MS = 3600_000;

/**
 * An index's sessions without those expired well before the event being folded (past the margin for clocks
 * running behind): they cannot come back, and keeping them would let the state grow with the stream.
 */
export function withoutLongExpired<S extends { readonly expiresAt: string }>(open: readonly S[], time: EventTime): S[] {
  const horizon = Date.parse(time.occurredAt) - EXPIRED_SESSION_MARGIN_MS;
  return open.filter((s) => Date.parse(s.expiresAt) > horizon);
}

export const initialSessionIndex = (): SessionIndexState => ({ userId: null, open: [] });

export function evolveSessionIndex(state: SessionIndexState, event: DomainEvent, time: EventTime): SessionIndexState {
  let open: readonly IndexedSession[];
  let userId = state.userId;
  switch (event.type) {
    case 'session_index.session_opened.v1': {
      const { sessionId, tokenHash, expiresAt } = event.data;
      userId = event.data.userId;
      open = [...state.open.filter((s) => s.sessionId !== sessionId), { sessionId, tokenHash, expiresAt }];
      break;
    }
    case 'session_index.session_extended.v1': {
      const { sessionId, expiresAt } = event.data;
      open = state.open.map((s) => (s.sessionId === sessionId ? { ...s, expiresAt } : s));
      break;
    }
    case 'session_index.sessions_closed.v1': {
      const closed = new Set(event.data.sessionIds);
      open = state.open.filter((s) => !closed.has(s.sessionId));
      break;
    }
    default:
      return state;
  }
  return { userId, open: withoutLongExpired(open, time) };
}

export const sessionIndexModel: StreamModel<SessionIndexState> = {
  name: 'user-sessions',
  revision: 1,
  initial: initialSessionIndex,
  evolve: evolveSessionIndex,
};

export interface EndSessions {
  readonly userId: string;
  readonly reason: SessionEndReason;
  readonly now: Date;
  /** A session to leave open (the caller's own, for revoke-other-sessions). */
  readonly except?: string | undefined;
}

export interface SessionsEnded {
  /** For `user-sessions-<userId>`. */
  readonly index: DomainEvent[];
  /** For each ended session's own stream. */
  readonly revocations: ReadonlyArray<ReturnType<typeof SessionRevoked>>;
}

/**
 * Ends every session of the user the index holds as open (but `except`). Those already past their expiry
 * are only closed in the index: they are over, and nothing answers them any more.
 */
export function decideEndSessions(command: EndSessions, state: SessionIndexState): SessionsEnded {
  const ending = state.open.filter((s) => s.sessionId !== command.except);
  if (ending.length === 0) return { index: [], revocations: [] };
  const now = command.now.getTime();
  return {
    index: [SessionsClosed({ userId: command.userId, sessionIds: ending.map((s) => s.sessionId) })],
    revocations: ending
      .filter((s) => Date.parse(s.expiresAt) > now)
      .map((s) => revocationOf({ sessionId: s.sessionId, userId: command.userId, tokenHash: s.tokenHash }, command.reason)),
  };
}

export function sessionOpened(userId: string, session: IndexedSession): DomainEvent {
  return SessionOpened({ userId, ...session });
}

export function sessionExtended(userId: string, sessionId: string, expiresAt: string): DomainEvent {
  return SessionExtended({ userId, sessionId, expiresAt });
}

export function sessionsClosed(userId: string, sessionIds: readonly string[]): DomainEvent {
  return SessionsClosed({ userId, sessionIds: [...sessionIds] });
}
