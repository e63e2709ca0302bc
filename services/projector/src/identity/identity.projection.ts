import { sql, type PostgresProjection } from '@portcullis/platform';
import { ERASED, projectionEventTypes, projectionNames } from '@portcullis/contracts';
import { instant } from '../pending-rows.ts';
import { heldInMemory, newAccountRow, pendingTables, socialFlowRow, verificationIdentifier } from './identity-batch.ts';

const optionalInstant = (iso: string | null) => (iso === null ? null : sql.timestamp(new Date(iso)));

/** Statements that find their one row by its key: a row not among the batch's new ones, so they need not be written first. */
const BY_KEY = new Set<string>([
  'user.updated.v1',
  'user.username_changed.v1',
  'user.email_verified.v1',
  'user.email_changed.v1',
  'user.password_changed.v1',
  'user.password_rehashed.v1',
  'user.provider_tokens_updated.v1',
  'user.account_unlinked.v1',
  'user.role_changed.v1',
  'user.banned.v1',
  'user.unbanned.v1',
  'verification.token_consumed.v1',
  'verification.token_revoked.v1',
  'social.flow_finished.v1',
]);

/**
 * `user`, `account` and `verification` rows (better-auth's names). Times are the decision times the events
 * carry. Verification rows hold a token's SHA-256 in `id` and `identifier`, never the token. A provider's
 * tokens stay on the log, sealed: the account rows keep their expiry times and scopes, never the tokens.
 */
export const identityProjection: PostgresProjection = {
  name: projectionNames.identity,
  // Its rows hold what the events' data says and when; where a request came from is the audit index's.
  reads: { metadata: ['occurredAt'] },
  tables: ['user', 'account', 'verification'],
  // The readers' indexes; its own statements find rows by id, an account by its user.
  indexesAfterLoad: ['user_email_key', 'user_username', 'user_email_pattern', 'user_name_pattern', 'user_created_at_id', 'verification_identifier'],
  handles: projectionEventTypes[projectionNames.identity],
  /** A replay's batch is mostly new users: their rows are changed in memory and written in a few statements. */
  async applyAll(tx, events) {
    const pending = pendingTables();
    const flush = async (): Promise<void> => {
      await pending.users.flush(tx);
      await pending.accounts.flush(tx);
      await pending.verifications.flush(tx);
    };
    for (const projected of events) {
      if (heldInMemory(pending, projected)) continue;
      if (!BY_KEY.has(projected.event.type)) await flush();
      await this.apply(tx, projected);
    }
    await flush();
  },
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
      case 'user.credential_account_created.v2':
      case 'user.provider_account_linked.v1': {
        const row = newAccountRow(event, instant(recorded.metadata.occurredAt));
        if (row === null) return;
        await tx.query(sql.unsafe`
          INSERT INTO account (id, "accountId", "providerId", "userId", password, "accessTokenExpiresAt", "refreshTokenExpiresAt", scope, "createdAt", "updatedAt")
          VALUES (${row.id}, ${row.accountId}, ${row.providerId}, ${row.userId}, ${row.password}, ${row.accessTokenExpiresAt}::timestamptz,
            ${row.refreshTokenExpiresAt}::timestamptz, ${row.scope}, ${at}, ${at})`);
        return;
      }
      case 'user.provider_tokens_updated.v1': {
        const t = event.data;
        await tx.query(sql.unsafe`
          UPDATE account SET
            "accessTokenExpiresAt" = ${optionalInstant(t.accessTokenExpiresAt)},
            "refreshTokenExpiresAt" = ${optionalInstant(t.refreshTokenExpiresAt)},
            scope = CASE WHEN ${t.scope !== undefined} THEN ${t.scope ?? null}::text ELSE scope END,
            "updatedAt" = ${at}
          WHERE id = ${t.accountId}`);
        return;
      }
      case 'user.account_unlinked.v1':
        await tx.query(sql.unsafe`DELETE FROM account WHERE id = ${event.data.accountId}`);
        return;
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
      case 'user.password_rehashed.v1':
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
        const v = event.data;
        const identifier = verificationIdentifier(v.purpose, v.tokenHash);
        await tx.query(sql.unsafe`
          INSERT INTO verification (id, identifier, value, "expiresAt", "createdAt", "updatedAt")
          VALUES (${v.tokenHash}, ${identifier}, ${v.userId}, ${sql.timestamp(new Date(v.expiresAt))}, ${at}, ${at})`);
        return;
      }
      case 'verification.token_consumed.v1':
      case 'verification.token_revoked.v1':
        await tx.query(sql.unsafe`DELETE FROM verification WHERE id = ${event.data.tokenHash}`);
        return;
      case 'social.flow_started.v1': {
        const row = socialFlowRow(event.data);
        await tx.query(sql.unsafe`
          INSERT INTO verification (id, identifier, value, "expiresAt", "createdAt", "updatedAt")
          VALUES (${row.id}, ${row.identifier}, ${row.value}, ${row.expiresAt}, ${at}, ${at})`);
        return;
      }
      case 'social.flow_finished.v1':
        await tx.query(sql.unsafe`DELETE FROM verification WHERE id = ${event.data.stateHash}`);
        return;
      default:
        return;
    }
  },
};
