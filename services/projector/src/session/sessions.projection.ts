import { sql, type PostgresProjection, type ProjectedEvent, type ProjectionSql } from '@portcullis/platform';
import { projectionEventTypes, projectionNames, type EventData } from '@portcullis/contracts';

interface SessionCreation {
  readonly data: Omit<EventData<'session.created.v1'>, 'method'>;
  readonly occurredAt: string;
  readonly impersonatedBy: string | null;
}

/** A session's row from either event that opens one: a sign-in's, or an admin's impersonation. */
function creationOf(projected: ProjectedEvent): SessionCreation | null {
  const { event, recorded } = projected;
  const occurredAt = recorded.metadata.occurredAt;
  if (event.type === 'session.created.v1') return { data: event.data, occurredAt, impersonatedBy: null };
  if (event.type === 'session.impersonation_started.v1') {
    const { impersonatedBy, ...data } = event.data;
    // better-auth opens it with dontRememberMe: it is never extended.
    return { data: { ...data, rememberMe: false }, occurredAt, impersonatedBy };
  }
  return null;
}

/** New sessions' rows, in one statement however many there are. */
async function insertSessions(tx: ProjectionSql, created: readonly SessionCreation[]): Promise<void> {
  if (created.length === 0) return;
  const rows = created.map(({ data: s, occurredAt, impersonatedBy }) => [
    s.sessionId,
    s.expiresAt,
    s.tokenHash,
    occurredAt,
    occurredAt,
    s.ipAddress,
    s.userAgent,
    s.userId,
    s.rememberMe,
    impersonatedBy,
  ]);
  await tx.query(sql.unsafe`
    INSERT INTO session (id, "expiresAt", token, "createdAt", "updatedAt", "ipAddress", "userAgent", "userId", "rememberMe", "impersonatedBy")
    SELECT * FROM ${sql.unnest(rows, ['text', 'timestamptz', 'text', 'timestamptz', 'timestamptz', 'text', 'text', 'text', 'bool', 'text'])}`);
}

/**
 * The `session` table; `token` holds the token's SHA-256, never the token. The active organization and
 * team are set by the session's own event and cleared by the organization events that end the caller's
 * standing there (leaving, removal, deletion): those carry no session ids, so the clearing is by value.
 */
export const sessionsProjection: PostgresProjection = {
  name: projectionNames.sessions,
  tables: ['session'],
  handles: projectionEventTypes[projectionNames.sessions],
  /** Under load a batch is mostly sign-ins: each run of them is one INSERT, the rest goes through `apply`. */
  async applyAll(tx, events) {
    let created: SessionCreation[] = [];
    for (const projected of events) {
      const creation = creationOf(projected);
      if (creation) {
        created.push(creation);
        continue;
      }
      await insertSessions(tx, created);
      created = [];
      await this.apply(tx, projected);
    }
    await insertSessions(tx, created);
  },
  async apply(tx, projected) {
    const { event, recorded } = projected;
    const at = sql.timestamp(new Date(recorded.metadata.occurredAt));
    switch (event.type) {
      case 'session.created.v1':
      case 'session.impersonation_started.v1':
        await insertSessions(tx, [creationOf(projected)!]);
        return;
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
