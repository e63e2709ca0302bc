import { sql, type PostgresProjection } from '@portcullis/platform';
import { projectionNames } from '@portcullis/contracts';

/** The `session` table; `token` holds the token's SHA-256, never the token. */
export const sessionsProjection: PostgresProjection = {
  name: projectionNames.sessions,
  tables: ['session'],
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
      case 'user.deleted.v1':
        await tx.query(sql.unsafe`DELETE FROM session WHERE "userId" = ${event.data.userId}`);
        return;
      default:
        return;
    }
  },
};
