import {
  DomainError,
  SessionRefreshed,
  SessionRevoked,
  type DomainEvent,
  type SessionEndReason,
} from '@portcullis/contracts';
import { streamModel } from '@portcullis/contracts';

export type SessionState =
  | { status: 'none' }
  | { status: 'active'; sessionId: string; userId: string; tokenHash: string; expiresAt: string }
  | { status: 'ended'; sessionId: string; userId: string; tokenHash: string | null };

export const initialSessionState = (): SessionState => ({ status: 'none' });

export function evolveSession(state: SessionState, event: DomainEvent): SessionState {
  switch (event.type) {
    case 'session.created.v2':
    case 'session.impersonation_started.v1':
      return {
        status: 'active',
        sessionId: event.data.sessionId,
        userId: event.data.userId,
        tokenHash: event.data.tokenHash,
        expiresAt: event.data.expiresAt,
      };
    case 'session.refreshed.v1':
      return state.status === 'active' ? { ...state, expiresAt: event.data.expiresAt } : state;
    case 'session.revoked.v2':
      return state.status === 'none'
        ? state
        : { status: 'ended', sessionId: state.sessionId, userId: state.userId, tokenHash: state.tokenHash };
    default:
      return state;
  }
}

/** The session stream `session-<sessionId>` as commands fold it. */
export const sessionModel = streamModel('session', 1, initialSessionState, evolveSession);

export type SessionCommand =
  | { type: 'refresh'; now: Date; expiresInSeconds: number; updateAgeSeconds: number }
  /** The owner (or whoever acts for the owner) ends it: someone else's session is left alone. */
  | { type: 'revoke'; byUserId: string; reason: SessionEndReason }
  | { type: 'expire'; now: Date };

/**
 * better-auth's rule: a session is refreshed once `updateAge` has passed since its expiresAt was last set
 * (expiresAt - expiresIn is that moment). Cheap enough to ask on every read before loading any stream.
 */
export function refreshDue(
  expiresAtMs: number,
  now: Date,
  policy: { expiresInSeconds: number; updateAgeSeconds: number },
): boolean {
  const lastSetAt = expiresAtMs - policy.expiresInSeconds * 1000;
  return lastSetAt + policy.updateAgeSeconds * 1000 <= now.getTime();
}

type SessionEvent = ReturnType<typeof SessionRefreshed> | ReturnType<typeof SessionRevoked>;

/**
 * Refresh follows better-auth: once `updateAge` has passed since expiresAt was last set, the session gets a
 * full new lifetime. Ending a session that has already ended is a no-op, so retries and races are harmless.
 */
export function decideSession(command: SessionCommand, state: SessionState): SessionEvent[] {
  switch (command.type) {
    case 'refresh': {
      if (state.status !== 'active') throw new DomainError('SESSION_NOT_FOUND');
      const expiresAt = Date.parse(state.expiresAt);
      const now = command.now.getTime();
      if (expiresAt <= now) throw new DomainError('SESSION_EXPIRED');
      if (!refreshDue(expiresAt, command.now, command)) return [];
      return [
        SessionRefreshed({
          sessionId: state.sessionId,
          userId: state.userId,
          expiresAt: new Date(now + command.expiresInSeconds * 1000).toISOString(),
        }),
      ];
    }
    case 'revoke': {
      if (state.status !== 'active') return [];
      // Someone else's session is answered as if it were absent: better-auth's revoke-session says status true.
      if (state.userId !== command.byUserId) return [];
      return [revocationOf(state, command.reason)];
    }
    case 'expire': {
      if (state.status !== 'active' || Date.parse(state.expiresAt) > command.now.getTime()) return [];
      return [revocationOf(state, 'expired')];
    }
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
}

export function revocationOf(
  session: { sessionId: string; userId: string; tokenHash: string | null },
  reason: SessionEndReason,
): ReturnType<typeof SessionRevoked> {
  return SessionRevoked({ sessionId: session.sessionId, userId: session.userId, tokenHash: session.tokenHash, reason });
}
