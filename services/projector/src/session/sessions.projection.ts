import { sql, type PostgresProjection, type ProjectedEvent } from '@portcullis/platform';
import { projectionEventTypes, projectionNames, type EventData } from '@portcullis/contracts';
import { instant, PendingRows } from '../pending-rows.ts';

interface SessionCreation {
  readonly data: Omit<EventData<'session.created.v2'>, 'method' | 'providerId'>;
  readonly occurredAt: string;
  readonly impersonatedBy: string | null;
}

/** A session's row from either event that opens one: a sign-in's, or an admin's impersonation. */
function creationOf(projected: ProjectedEvent): SessionCreation | null {
  const { event, recorded } = projected;
  const occurredAt = recorded.metadata.occurredAt;
  if (event.type === 'session.created.v2') return { data: event.data, occurredAt, impersonatedBy: null };
  if (event.type === 'session.impersonation_started.v1') {
    const { impersonatedBy, ...data } = event.data;
    // better-auth opens it with dontRememberMe: it is never extended.
    return { data: { ...data, rememberMe: false }, occurredAt, impersonatedBy };
  }
  return null;
}

type SessionRow = {
  id: string;
  expiresAt: string;
  token: string;
  createdAt: string;
  updatedAt: string;
  ipAddress: string | null;
  userAgent: string | null;
  userId: string;
  rememberMe: boolean;
  impersonatedBy: string | null;
  activeOrganizationId: string | null;
  activeTeamId: string | null;
};

function pendingSessions(): PendingRows<SessionRow> {
  return new PendingRows<SessionRow>('session', 'id', {
    id: 'text',
    expiresAt: 'timestamptz',
    token: 'text',
    createdAt: 'timestamptz',
    updatedAt: 'timestamptz',
    ipAddress: 'text',
    userAgent: 'text',
    userId: 'text',
    rememberMe: 'bool',
    impersonatedBy: 'text',
    activeOrganizationId: 'text',
    activeTeamId: 'text',
  });
}

function rowOf({ data: s, occurredAt, impersonatedBy }: SessionCreation): SessionRow {
  return {
    id: s.sessionId,
    expiresAt: s.expiresAt,
    token: s.tokenHash,
    createdAt: occurredAt,
    updatedAt: occurredAt,
    ipAddress: s.ipAddress,
    userAgent: s.userAgent,
    userId: s.userId,
    rememberMe: s.rememberMe,
    impersonatedBy,
    activeOrganizationId: null,
    activeTeamId: null,
  };
}

/**
 * The event applied to this batch's new sessions, in memory, as `apply` would change them: true when it
 * was. A session opened and revoked within one batch is then never written.
 */
function heldInMemory(pending: PendingRows<SessionRow>, projected: ProjectedEvent): boolean {
  const creation = creationOf(projected);
  if (creation) return pending.add(rowOf(creation));
  const { event, recorded } = projected;
  const session = 'sessionId' in event.data ? pending.get(event.data.sessionId) : undefined;
  if (!session) return false;
  const at = instant(recorded.metadata.occurredAt);
  switch (event.type) {
    case 'session.refreshed.v1':
      session.expiresAt = instant(event.data.expiresAt);
      session.updatedAt = at;
      return true;
    case 'session.updated.v1':
      session.updatedAt = at;
      return true;
    case 'session.revoked.v2':
      return pending.delete(session.id);
    case 'session.active_organization_changed.v1':
      session.activeOrganizationId = event.data.activeOrganizationId;
      session.activeTeamId = event.data.activeTeamId;
      session.updatedAt = at;
      return true;
    default:
      return false;
  }
}

/** Statements that find their one session by its id: one not among the batch's new ones, so they need not be written first. */
const BY_KEY = new Set<string>(['session.refreshed.v1', 'session.updated.v1', 'session.revoked.v2', 'session.active_organization_changed.v1']);

/**
 * The `session` table; `token` holds the token's SHA-256, never the token. The active organization and
 * team are set by the session's own event and cleared by the organization events that end the caller's
 * standing there (leaving, removal, deletion): those carry no session ids, so the clearing is by value.
 */
export const sessionsProjection: PostgresProjection = {
  name: projectionNames.sessions,
  // Its rows hold what the events' data says and when; where a request came from is the audit index's.
  reads: { metadata: ['occurredAt'] },
  tables: ['session'],
  // Found by id, user, active organization and team; never by token.
  indexesAfterLoad: ['session_token_key'],
  handles: projectionEventTypes[projectionNames.sessions],
  /** Under load, or in a replay, a batch is mostly sign-ins: their rows are written in one statement. */
  async applyAll(tx, events) {
    const pending = pendingSessions();
    for (const projected of events) {
      if (heldInMemory(pending, projected)) continue;
      if (!BY_KEY.has(projected.event.type)) await pending.flush(tx);
      await this.apply(tx, projected);
    }
    await pending.flush(tx);
  },
  async apply(tx, projected) {
    const { event, recorded } = projected;
    const at = sql.timestamp(new Date(recorded.metadata.occurredAt));
    switch (event.type) {
      case 'session.created.v2':
      case 'session.impersonation_started.v1': {
        const pending = pendingSessions();
        pending.add(rowOf(creationOf(projected)!));
        await pending.flush(tx);
        return;
      }
      case 'session.refreshed.v1':
        await tx.query(sql.unsafe`
          UPDATE session SET "expiresAt" = ${sql.timestamp(new Date(event.data.expiresAt))}, "updatedAt" = ${at}
          WHERE id = ${event.data.sessionId}`);
        return;
      case 'session.updated.v1':
        await tx.query(sql.unsafe`UPDATE session SET "updatedAt" = ${at} WHERE id = ${event.data.sessionId}`);
        return;
      case 'session.revoked.v2':
        await tx.query(sql.unsafe`DELETE FROM session WHERE id = ${event.data.sessionId}`);
        return;
      case 'session.active_organization_changed.v1': {
        const c = event.data;
        await tx.query(sql.unsafe`
          UPDATE session SET "activeOrganizationId" = ${c.activeOrganizationId}, "activeTeamId" = ${c.activeTeamId}, "updatedAt" = ${at}
          WHERE id = ${c.sessionId}`);
        return;
      }
      case 'organization.member_removed.v1':
        await tx.query(sql.unsafe`
          UPDATE session SET "activeOrganizationId" = NULL, "activeTeamId" = NULL, "updatedAt" = ${at}
          WHERE "userId" = ${event.data.userId} AND "activeOrganizationId" = ${event.data.organizationId}`);
        return;
      case 'organization.deleted.v1':
        await tx.query(sql.unsafe`
          UPDATE session SET "activeOrganizationId" = NULL, "activeTeamId" = NULL, "updatedAt" = ${at}
          WHERE "activeOrganizationId" = ${event.data.organizationId}`);
        return;
      case 'organization.team_removed.v1':
        await tx.query(sql.unsafe`UPDATE session SET "activeTeamId" = NULL, "updatedAt" = ${at} WHERE "activeTeamId" = ${event.data.teamId}`);
        return;
      case 'organization.team_member_removed.v1':
        await tx.query(sql.unsafe`
          UPDATE session SET "activeTeamId" = NULL, "updatedAt" = ${at}
          WHERE "userId" = ${event.data.userId} AND "activeTeamId" = ${event.data.teamId}`);
        return;
      case 'user.deleted.v1':
        await tx.query(sql.unsafe`DELETE FROM session WHERE "userId" = ${event.data.userId}`);
        return;
      default:
        return;
    }
  },
};
