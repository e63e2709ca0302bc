import { sql, type PostgresProjection } from '@portcullis/platform';
import { ERASED, projectionEventTypes, projectionNames } from '@portcullis/contracts';

/**
 * `user`, `account` and `verification` rows (better-auth's names). Times are the decision times the events
 * carry. Verification rows hold a token's SHA-256 in `id` and `identifier`, never the token.
 */
export const identityProjection: PostgresProjection = {
  name: projectionNames.identity,
  tables: ['user', 'account', 'verification'],
  handles: projectionEventTypes[projectionNames.identity],
  async apply(tx, { event, recorded }) {
    const at = sql.timestamp(new Date(recorded.metadata.occurredAt));
    switch (event.type) {
      case 'user.registered.v1': {
        const u = event.data;
        // Only a deleted user's key is ever destroyed, so a replay meets its deletion further on: no row, rather
        // than one whose erased email would collide (email is unique) with another erased user's meanwhile.
        if (u.email === ERASED) return;
        await tx.query(sql.unsafe`
          INSERT INTO "user" (id, name, email, "emailVerified", image, "createdAt", "updatedAt")
          VALUES (${u.userId}, ${u.name}, ${u.email}, ${u.emailVerified}, ${u.image}, ${at}, ${at})`);
        return;
      }
      case 'user.credential_account_created.v1': {
        const a = event.data;
        // better-auth's credential account: accountId is the user id, providerId "credential".
        await tx.query(sql.unsafe`
          INSERT INTO account (id, "accountId", "providerId", "userId", password, "createdAt", "updatedAt")
          VALUES (${a.accountId}, ${a.userId}, 'credential', ${a.userId}, ${a.passwordHash}, ${at}, ${at})`);
        return;
      }
      case 'user.updated.v1': {
        const u = event.data;
        await tx.query(sql.unsafe`
          UPDATE "user" SET
            name = CASE WHEN ${u.name !== undefined} THEN ${u.name ?? null}::text ELSE name END,
            image = CASE WHEN ${u.image !== undefined} THEN ${u.image ?? null}::text ELSE image END,
            "updatedAt" = ${at}
          WHERE id = ${u.userId}`);
        return;
      }
      case 'user.username_changed.v1': {
        const u = event.data;
        await tx.query(sql.unsafe`
          UPDATE "user" SET username = ${u.username}, "displayUsername" = ${u.displayUsername}, "updatedAt" = ${at}
          WHERE id = ${u.userId}`);
        return;
      }
      case 'user.email_verified.v1':
        await tx.query(sql.unsafe`
          UPDATE "user" SET "emailVerified" = true, "updatedAt" = ${at}
          WHERE id = ${event.data.userId} AND email = ${event.data.email}`);
        return;
      case 'user.email_changed.v1': {
        const c = event.data;
        if (c.email === ERASED) return;
        await tx.query(sql.unsafe`
          UPDATE "user" SET email = ${c.email}, "emailVerified" = ${c.emailVerified}, "updatedAt" = ${at} WHERE id = ${c.userId}`);
        return;
      }
      case 'user.password_changed.v1':
        await tx.query(sql.unsafe`
          UPDATE account SET password = ${event.data.passwordHash}, "updatedAt" = ${at} WHERE id = ${event.data.accountId}`);
        return;
      case 'user.role_changed.v1':
        await tx.query(sql.unsafe`UPDATE "user" SET role = ${event.data.role}, "updatedAt" = ${at} WHERE id = ${event.data.userId}`);
        return;
      case 'user.banned.v1': {
        const b = event.data;
        const expires = b.expiresAt === null ? null : sql.timestamp(new Date(b.expiresAt));
        await tx.query(sql.unsafe`
          UPDATE "user" SET banned = true, "banReason" = ${b.reason}, "banExpires" = ${expires}, "updatedAt" = ${at} WHERE id = ${b.userId}`);
        return;
      }
      case 'user.unbanned.v1':
        await tx.query(sql.unsafe`
          UPDATE "user" SET banned = false, "banReason" = NULL, "banExpires" = NULL, "updatedAt" = ${at} WHERE id = ${event.data.userId}`);
        return;
      case 'user.deleted.v1': {
        // Everything of the user's that lives here; sessions and the cache go in their own projections.
        const userId = event.data.userId;
        await tx.query(sql.unsafe`DELETE FROM account WHERE "userId" = ${userId}`);
        await tx.query(sql.unsafe`DELETE FROM verification WHERE value = ${userId}`);
        await tx.query(sql.unsafe`DELETE FROM "user" WHERE id = ${userId}`);
        return;
      }
      case 'verification.token_issued.v1': {
        // better-auth's identifiers, with the token's hash where better-auth keeps the token.
        const v = event.data;
        const identifier = v.purpose === 'reset-password' ? `reset-password:${v.tokenHash}` : `delete-account-${v.tokenHash}`;
        await tx.query(sql.unsafe`
          INSERT INTO verification (id, identifier, value, "expiresAt", "createdAt", "updatedAt")
          VALUES (${v.tokenHash}, ${identifier}, ${v.userId}, ${sql.timestamp(new Date(v.expiresAt))}, ${at}, ${at})`);
        return;
      }
      case 'verification.token_consumed.v1':
      case 'verification.token_revoked.v1':
        await tx.query(sql.unsafe`DELETE FROM verification WHERE id = ${event.data.tokenHash}`);
        return;
      default:
        return;
    }
  },
};
