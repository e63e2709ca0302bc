import { sql, type PostgresProjection } from '@portcullis/platform';
import { projectionNames } from '@portcullis/contracts';

/** `user` and `account` rows (better-auth's names). Times are the decision times the events carry. */
export const identityProjection: PostgresProjection = {
  name: projectionNames.identity,
  tables: ['user', 'account', 'verification'],
  async apply(tx, { event, recorded }) {
    const at = sql.timestamp(new Date(recorded.metadata.occurredAt));
    switch (event.type) {
      case 'user.registered.v1': {
        const u = event.data;
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
      default:
        return;
    }
  },
};
