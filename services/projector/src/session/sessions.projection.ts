import { sql, type PostgresProjection } from '@portcullis/platform';
import { projectionEventTypes, projectionNames } from '@portcullis/contracts';

/**
 * The `session` table; `token` holds the token's SHA-256, never the token. The active organization and
 * team are set by the session's own event and cleared by the organization events that end the caller's
 * standing there (leaving, removal, deletion): those carry no session ids, so the clearing is by value.
 */
export const sessionsProjection: PostgresProjection = {
  name: projectionNames.sessions,
  tables: ['session'],
  handles: projectionEventTypes[projectionNames.sessions],
  async apply(tx, { event, recorded }) {
    const at = sql.timestamp(new Date(recorded.metadata.occurredAt));
    switch (event.type) {
      case 'session.created.v1': {
        const s = event.data;
        await tx.query(sql.unsafe`
          INSERT INTO session (id, "expiresAt", token, "createdAt", "updatedAt", "ipAddress", "userAgent", "userId", "rememberMe")
          VALUES (${s.sessionId}, ${sql.timestamp(new Date(s.expiresAt))}, ${s.tokenHash}, ${at}, ${at},
                  ${s.ipAddress}, ${s.userAgent}, ${s.userId}, ${s.rememberMe})`);
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
      case 'session.revoked.v1':
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
