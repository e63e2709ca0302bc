import { DomainError, type OpsUserAnswer } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { ConsolePorts } from './ports.ts';
import { userColumns, userFromRow, type UserRow } from '../identity/user-queries.ts';
import { isoTime } from '../read-model.ts';

interface AccountRow {
  readonly id: string;
  readonly providerId: string;
  readonly accountId: string;
  readonly scope: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

interface MembershipRow {
  readonly id: string;
  readonly name: string;
  readonly slug: string;
  readonly role: string;
  readonly createdAt: number;
}

/** A sign-in, as the log has it: a session opened by the user (an impersonation is another event). */
const signInTypes = ['session.created.v1', 'session.created.v2'];

/** better-auth stores granted scopes comma-separated; some providers grant them space-separated. */
const scopesOf = (scope: string | null): string[] => (scope === null ? [] : scope.split(/[,\s]+/).filter((s) => s !== ''));

/**
 * The user page's facts: the user (as get-user answers it), its accounts without a token or hash in sight, its
 * organizations with its role in each, how many sessions it has live, and when it last signed in.
 */
export async function userPage(ctx: ConsolePorts, userId: string): Promise<OpsUserAnswer> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`SELECT ${userColumns} FROM "user" WHERE id = ${userId}`)) as UserRow | null;
  if (!row) throw new DomainError('USER_NOT_FOUND');
  await ctx.progress.sessionTableCaughtUp();
  const now = sql.timestamp(ctx.clock());
  const [accounts, memberships, sessionCount, lastSessionOpened, lastSignInLogged] = await Promise.all([
    ctx.pool.any(sql.unsafe`
      SELECT id, "providerId", "accountId", scope, "createdAt", "updatedAt" FROM account
      WHERE "userId" = ${userId} ORDER BY "createdAt", id`) as Promise<readonly AccountRow[]>,
    ctx.pool.any(sql.unsafe`
      SELECT o.id, o.name, o.slug, m.role, m."createdAt" FROM member m JOIN organization o ON o.id = m."organizationId"
      WHERE m."userId" = ${userId} ORDER BY m."createdAt", o.id`) as Promise<readonly MembershipRow[]>,
    ctx.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM session WHERE "userId" = ${userId} AND "expiresAt" > ${now}`) as Promise<number>,
    // A live session says it at once; the audit index, which follows the log a little behind, remembers the ended ones.
    ctx.pool.oneFirst(sql.unsafe`
      SELECT max("createdAt") FROM session WHERE "userId" = ${userId} AND "impersonatedBy" IS NULL`) as Promise<number | null>,
    ctx.pool.oneFirst(sql.unsafe`
      SELECT max(a.recorded_at) FROM audit_event_subject s JOIN audit_event a ON a.position = s.position
      WHERE s.subject = ${`user:${userId}`} AND a.type = ANY(${sql.array(signInTypes, 'text')})`) as Promise<number | null>,
  ]);
  const lastSignIn = Math.max(lastSessionOpened ?? 0, lastSignInLogged ?? 0);
  return {
    user: userFromRow(row),
    accounts: accounts.map((a) => ({
      id: a.id,
      providerId: a.providerId,
      accountId: a.accountId,
      scopes: scopesOf(a.scope),
      createdAt: isoTime(a.createdAt),
      updatedAt: isoTime(a.updatedAt),
    })),
    organizations: memberships.map((m) => ({ id: m.id, name: m.name, slug: m.slug, role: m.role, memberSince: isoTime(m.createdAt) })),
    sessionCount,
    lastSignInAt: lastSignIn === 0 ? null : isoTime(lastSignIn),
  };
}
