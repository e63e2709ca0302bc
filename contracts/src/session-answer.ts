import type { DomainEvent } from './events/index.ts';
import type { CachedSession } from './session-cache.ts';

type CachedSessionFields = CachedSession['session'];

/**
 * A session as get-session answers it (without its token), folded from the events of its own stream, each
 * with the time it was recorded: what the session cache writes and what the api reads back from the log
 * when no read model holds the session. Null before creation and once ended. The organization events
 * that clear an active organization without naming the session are not on this stream; a reader of the
 * fold checks the selection against the organization itself.
 */
export function evolveSessionAnswer(session: CachedSessionFields | null, event: DomainEvent, occurredAt: string): CachedSessionFields | null {
  if (event.type === 'session.created.v2') return openedSession(event.data, occurredAt, { rememberMe: event.data.rememberMe, impersonatedBy: null });
  if (event.type === 'session.impersonation_started.v1') {
    // better-auth opens it as a dont-remember session: it lasts its hour and is never extended.
    return openedSession(event.data, occurredAt, { rememberMe: false, impersonatedBy: event.data.impersonatedBy });
  }
  if (session === null) return null;
  switch (event.type) {
    case 'session.refreshed.v1':
      return { ...session, expiresAt: event.data.expiresAt, updatedAt: occurredAt };
    case 'session.updated.v1':
      return { ...session, updatedAt: occurredAt };
    case 'session.active_organization_changed.v1':
      return {
        ...session,
        activeOrganizationId: event.data.activeOrganizationId,
        activeTeamId: event.data.activeTeamId,
        updatedAt: occurredAt,
      };
    case 'session.revoked.v2':
      return null;
    default:
      return session;
  }
}

type SessionOpening = Pick<CachedSessionFields, 'userId' | 'expiresAt' | 'ipAddress' | 'userAgent'> & { readonly sessionId: string };

function openedSession(
  opened: SessionOpening,
  occurredAt: string,
  kind: Pick<CachedSessionFields, 'rememberMe' | 'impersonatedBy'>,
): CachedSessionFields {
  return {
    id: opened.sessionId,
    userId: opened.userId,
    expiresAt: opened.expiresAt,
    createdAt: occurredAt,
    updatedAt: occurredAt,
    ipAddress: opened.ipAddress,
    userAgent: opened.userAgent,
    rememberMe: kind.rememberMe,
    activeOrganizationId: null,
    activeTeamId: null,
    impersonatedBy: kind.impersonatedBy,
  };
}
