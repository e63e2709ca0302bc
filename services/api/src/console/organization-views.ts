import { DomainError, type consoleOpsEndpoints, type OpsOrganizationAnswer, type OpsOrganizationsAnswer, type OpsOrganizationSummary } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { z } from 'zod';
import type { ConsolePorts } from './ports.ts';
import { isoTime } from '../read-model.ts';
import { refOf, userJoin, userRefColumns } from './user-ref.ts';

export type OrganizationsQuery = z.output<NonNullable<(typeof consoleOpsEndpoints)['opsOrganizations']['query']>>;

interface OrganizationRow {
  readonly id: string;
  readonly name: string;
  readonly slug: string;
  readonly logo: string | null;
  readonly metadata: string | null;
  readonly createdAt: number;
  readonly member_count: number;
}

/** LIKE treats `%`, `_` and `\` as its own; a search for them means the characters. */
const likeEscaped = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`);

const memberCount = sql.fragment`(SELECT count(*)::int FROM member m WHERE m."organizationId" = o.id)`;

const sortExpressions: Record<OrganizationsQuery['sortBy'], ReturnType<typeof sql.fragment>> = {
  name: sql.fragment`lower(o.name)`,
  slug: sql.fragment`o.slug`,
  createdAt: sql.fragment`o."createdAt"`,
  memberCount: sql.fragment`member_count`,
};

function summaryOf(row: OrganizationRow): OpsOrganizationSummary {
  return { id: row.id, name: row.name, slug: row.slug, logo: row.logo, createdAt: isoTime(row.createdAt), memberCount: row.member_count };
}

/** Every organization, searched by a part of its name or slug, sorted and paged, with the total that matched. */
export async function listOrganizations(ctx: ConsolePorts, query: OrganizationsQuery): Promise<OpsOrganizationsAnswer> {
  const pattern = query.search ? `%${likeEscaped(query.search.toLowerCase())}%` : null;
  const where = pattern === null ? sql.fragment`true` : sql.fragment`(lower(o.name) LIKE ${pattern} OR o.slug LIKE ${pattern})`;
  const direction = query.sortDirection === 'asc' ? sql.fragment`ASC` : sql.fragment`DESC`;
  const [rows, total] = await Promise.all([
    ctx.pool.any(sql.unsafe`
      SELECT o.id, o.name, o.slug, o.logo, o.metadata, o."createdAt", ${memberCount} AS member_count
      FROM organization o WHERE ${where}
      ORDER BY ${sortExpressions[query.sortBy]} ${direction}, o.id ${direction}
      LIMIT ${query.limit} OFFSET ${query.offset}`) as Promise<readonly OrganizationRow[]>,
    ctx.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM organization o WHERE ${where}`) as Promise<number>,
  ]);
  return { organizations: rows.map(summaryOf), total, limit: query.limit, offset: query.offset };
}

/** The metadata column holds a record as JSON text; anything else there is shown as none. */
function metadataOf(text: string | null): Record<string, unknown> | null {
  if (text === null || text === '') return null;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

interface Named {
  readonly [column: string]: unknown;
}

interface MemberRow extends Named {
  readonly id: string;
  readonly userId: string;
  readonly role: string;
  readonly createdAt: number;
}

interface InvitationRow extends Named {
  readonly id: string;
  readonly email: string;
  readonly role: string;
  readonly status: string;
  readonly teamId: string | null;
  readonly inviterId: string;
  readonly expiresAt: number;
  readonly createdAt: number;
}

interface TeamRow {
  readonly id: string;
  readonly name: string;
  readonly createdAt: number;
  readonly updatedAt: number | null;
}

interface TeamMemberRow extends Named {
  readonly id: string;
  readonly teamId: string;
  readonly userId: string;
  readonly createdAt: number;
}

/**
 * One organization as its operator sees it, whoever they are: members with their names and roles,
 * invitations (every status) with their inviters, and teams with their members.
 */
export async function organizationDetail(ctx: ConsolePorts, organizationId: string): Promise<OpsOrganizationAnswer> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT o.id, o.name, o.slug, o.logo, o.metadata, o."createdAt", ${memberCount} AS member_count
    FROM organization o WHERE o.id = ${organizationId}`)) as OrganizationRow | null;
  if (!row) throw new DomainError('ORGANIZATION_NOT_FOUND', { status: 404 });
  const [members, invitations, teams, teamMembers] = await Promise.all([
    ctx.pool.any(sql.unsafe`
      SELECT m.id, m."userId", m.role, m."createdAt", ${userRefColumns('u')}
      FROM member m ${userJoin('u', sql.fragment`m."userId"`)}
      WHERE m."organizationId" = ${organizationId} ORDER BY m."createdAt", m.id`) as Promise<readonly MemberRow[]>,
    ctx.pool.any(sql.unsafe`
      SELECT v.id, v.email, v.role, v.status, v."teamId", v."inviterId", v."expiresAt", v."createdAt", ${userRefColumns('u')}
      FROM invitation v ${userJoin('u', sql.fragment`v."inviterId"`)}
      WHERE v."organizationId" = ${organizationId} ORDER BY v."createdAt" DESC, v.id`) as Promise<readonly InvitationRow[]>,
    ctx.pool.any(sql.unsafe`
      SELECT t.id, t.name, t."createdAt", t."updatedAt" FROM team t
      WHERE t."organizationId" = ${organizationId} ORDER BY t."createdAt", t.id`) as Promise<readonly TeamRow[]>,
    ctx.pool.any(sql.unsafe`
      SELECT tm.id, tm."teamId", tm."userId", tm."createdAt", ${userRefColumns('u')}
      FROM "teamMember" tm JOIN team t ON t.id = tm."teamId" ${userJoin('u', sql.fragment`tm."userId"`)}
      WHERE t."organizationId" = ${organizationId} ORDER BY tm."createdAt", tm.id`) as Promise<readonly TeamMemberRow[]>,
  ]);
  const now = ctx.clock().getTime();
  return {
    organization: { ...summaryOf(row), metadata: metadataOf(row.metadata) },
    members: members.map((m) => ({ id: m.id, user: refOf(m, 'u', m.userId), role: m.role, createdAt: isoTime(m.createdAt) })),
    invitations: invitations.map((v) => ({
      id: v.id,
      email: v.email,
      role: v.role,
      status: v.status,
      expired: v.status === 'pending' && v.expiresAt <= now,
      teamId: v.teamId,
      inviter: refOf(v, 'u', v.inviterId),
      expiresAt: isoTime(v.expiresAt),
      createdAt: isoTime(v.createdAt),
    })),
    teams: teams.map((t) => ({
      id: t.id,
      name: t.name,
      createdAt: isoTime(t.createdAt),
      updatedAt: t.updatedAt === null ? null : isoTime(t.updatedAt),
      members: teamMembers.filter((tm) => tm.teamId === t.id).map((tm) => ({ id: tm.id, user: refOf(tm, 'u', tm.userId), createdAt: isoTime(tm.createdAt) })),
    })),
  };
}
