import type { consoleOpsEndpoints, OpsSession, OpsSessionsAnswer } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { z } from 'zod';
import type { ConsolePorts } from './ports.ts';
import { isoTime } from '../read-model.ts';
import { refOf, userJoin, userRefColumns } from './user-ref.ts';

type Fragment = ReturnType<typeof sql.fragment>;
export type LiveSessionsQuery = z.output<NonNullable<(typeof consoleOpsEndpoints)['opsSessions']['query']>>;

interface LiveSessionRow {
  readonly id: string;
  readonly token: string;
  readonly userId: string;
  readonly ipAddress: string | null;
  readonly userAgent: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly expiresAt: number;
  readonly activeOrganizationId: string | null;
  readonly impersonatedBy: string | null;
  readonly [column: string]: unknown;
}

const sortColumns: Record<LiveSessionsQuery['sortBy'], string> = { createdAt: 'createdAt', expiresAt: 'expiresAt', updatedAt: 'updatedAt' };

/**
 * The session's address as an inet, or null where the column holds none. Addresses are stored normalized
 * (see `normalizeClientAddress`); the pattern keeps the cast from failing the whole query on anything else.
 */
const sessionAddress = sql.fragment`(CASE WHEN s."ipAddress" ~ '^[0-9A-Fa-f:.]+$' THEN s."ipAddress"::inet END)`;

function conditions(query: LiveSessionsQuery, now: Date): Fragment[] {
  const where: Fragment[] = [sql.fragment`s."expiresAt" > ${sql.timestamp(now)}`];
  if (query.user && query.user.length > 0) where.push(sql.fragment`s."userId" = ANY(${sql.array(query.user, 'text')})`);
  if (query.ip) where.push(sql.fragment`${sessionAddress} <<= ${query.ip}::inet`);
  if (query.createdAfter) where.push(sql.fragment`s."createdAt" >= ${query.createdAfter}::timestamptz`);
  if (query.createdBefore) where.push(sql.fragment`s."createdAt" < ${query.createdBefore}::timestamptz`);
  if (query.minAgeSeconds !== undefined) where.push(sql.fragment`s."createdAt" <= ${sql.timestamp(new Date(now.getTime() - query.minAgeSeconds * 1000))}`);
  if (query.maxAgeSeconds !== undefined) where.push(sql.fragment`s."createdAt" >= ${sql.timestamp(new Date(now.getTime() - query.maxAgeSeconds * 1000))}`);
  if (query.impersonated === true) where.push(sql.fragment`s."impersonatedBy" IS NOT NULL`);
  if (query.impersonated === false) where.push(sql.fragment`s."impersonatedBy" IS NULL`);
  return where;
}

/**
 * Every user's live sessions (unexpired: a revoked one has left the table), filtered, sorted and paged, with
 * the total that matched. The table is first brought to the log's head, as list-user-sessions does, so a
 * session just opened on another api process is listed.
 */
export async function listLiveSessions(ctx: ConsolePorts, query: LiveSessionsQuery): Promise<OpsSessionsAnswer> {
  await ctx.progress.sessionTableCaughtUp();
  const where = sql.join(conditions(query, ctx.clock()), sql.fragment` AND `);
  const direction = query.sortDirection === 'asc' ? sql.fragment`ASC` : sql.fragment`DESC`;
  const sortColumn = sql.identifier(['s', sortColumns[query.sortBy]]);
  const [rows, total] = await Promise.all([
    ctx.pool.any(sql.unsafe`
      SELECT s.id, s.token, s."userId", s."ipAddress", s."userAgent", s."createdAt", s."updatedAt", s."expiresAt",
             s."activeOrganizationId", s."impersonatedBy", ${userRefColumns('u')}, ${userRefColumns('i')}
      FROM session s ${userJoin('u', sql.fragment`s."userId"`)} ${userJoin('i', sql.fragment`s."impersonatedBy"`)}
      WHERE ${where}
      ORDER BY ${sortColumn} ${direction}, s.id ${direction}
      LIMIT ${query.limit} OFFSET ${query.offset}`) as Promise<readonly LiveSessionRow[]>,
    ctx.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM session s WHERE ${where}`) as Promise<number>,
  ]);
  return { sessions: rows.map(sessionOf), total, limit: query.limit, offset: query.offset };
}

function sessionOf(row: LiveSessionRow): OpsSession {
  return {
    id: row.id,
    tokenHash: row.token,
    user: refOf(row, 'u', row.userId),
    ipAddress: row.ipAddress,
    userAgent: row.userAgent,
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt),
    expiresAt: isoTime(row.expiresAt),
    activeOrganizationId: row.activeOrganizationId,
    impersonatedBy: row.impersonatedBy === null ? null : refOf(row, 'i', row.impersonatedBy),
  };
}
