import { DomainError, type ListMembersQuery, type MemberWithUser, type Organization } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { OrganizationPorts } from './ports.ts';
import { slugHolder } from './slug-reservation.ts';
import { parseMetadata } from './organization-answers.ts';
import { isoTime } from '../read-model.ts';

/** Reads of the `organization` and `member` read models (better-auth's tables), answered in better-auth's shapes. */


interface OrganizationRow {
  id: string;
  name: string;
  slug: string;
  logo: string | null;
  metadata: string | null;
  createdAt: number;
}

interface MemberUserRow {
  id: string;
  organizationId: string;
  userId: string;
  role: string;
  teamId: string | null;
  createdAt: number;
  u_name: string;
  u_email: string;
  u_image: string | null;
}

const organizationColumns = sql.fragment`o.id, o.name, o.slug, o.logo, o.metadata, o."createdAt"`;
const memberUserColumns = sql.fragment`
  m.id, m."organizationId", m."userId", m.role, m."teamId", m."createdAt",
  u.name AS u_name, u.email AS u_email, u.image AS u_image`;

function toOrganization(row: OrganizationRow): Organization {
  return { id: row.id, name: row.name, slug: row.slug, logo: row.logo, metadata: parseMetadata(row.metadata), createdAt: isoTime(row.createdAt) };
}

function toMemberWithUser(row: MemberUserRow): MemberWithUser {
  return {
    id: row.id,
    organizationId: row.organizationId,
    userId: row.userId,
    role: row.role,
    ...(row.teamId !== null ? { teamId: row.teamId } : {}),
    createdAt: isoTime(row.createdAt),
    user: { id: row.userId, name: row.u_name, email: row.u_email, image: row.u_image },
  };
}

export async function findOrganizationById(ctx: OrganizationPorts, organizationId: string): Promise<Organization | null> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`SELECT ${organizationColumns} FROM organization o WHERE o.id = ${organizationId}`)) as OrganizationRow | null;
  return row ? toOrganization(row) : null;
}

export async function findOrganizationBySlug(ctx: OrganizationPorts, slug: string): Promise<Organization | null> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`SELECT ${organizationColumns} FROM organization o WHERE o.slug = ${slug}`)) as OrganizationRow | null;
  if (row) return toOrganization(row);
  // One named before slugs were normalized (`ALPHA`) holds the normalized form asked for on the log alone.
  const holder = await slugHolder(ctx, slug);
  return holder === null ? null : findOrganizationById(ctx, holder);
}

/** The organizations a user is a member of, in the order they joined. */
export async function listUserOrganizations(ctx: OrganizationPorts, userId: string): Promise<Organization[]> {
  const rows = (await ctx.pool.any(sql.unsafe`
    SELECT ${organizationColumns} FROM member m JOIN organization o ON o.id = m."organizationId"
    WHERE m."userId" = ${userId}
    ORDER BY m."createdAt", o.id`)) as readonly OrganizationRow[];
  return rows.map(toOrganization);
}

/** A user's membership of an organization with the user's public fields, or null for a non-member. */
export async function findMemberWithUser(ctx: OrganizationPorts, organizationId: string, userId: string): Promise<MemberWithUser | null> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT ${memberUserColumns} FROM member m JOIN "user" u ON u.id = m."userId"
    WHERE m."organizationId" = ${organizationId} AND m."userId" = ${userId}`)) as MemberUserRow | null;
  return row ? toMemberWithUser(row) : null;
}

export interface MemberPage {
  readonly members: MemberWithUser[];
  readonly total: number;
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

type MemberFilter = Pick<ListMembersQuery, 'filterField' | 'filterOperator' | 'filterValue'>;

/**
 * better-auth's list-members filter: one field, one operator (eq by default), one value. Comparisons are on
 * the column's text, except createdAt, which compares as a time.
 */
function memberFilter(filter: MemberFilter): ReturnType<typeof sql.fragment> {
  if (filter.filterField === undefined || filter.filterValue === undefined) return sql.fragment`true`;
  const isTime = filter.filterField === 'createdAt';
  const column = isTime ? sql.identifier(['m', filter.filterField]) : sql.fragment`${sql.identifier(['m', filter.filterField])}::text`;
  const values = (Array.isArray(filter.filterValue) ? filter.filterValue : [filter.filterValue]).map(String);
  if (isTime && values.some((raw) => Number.isNaN(Date.parse(raw)))) {
    throw new DomainError('INVALID_QUERY_PARAMETERS', { details: '[query.filterValue] Invalid date' });
  }
  const value = (raw: string) => (isTime ? sql.timestamp(new Date(raw)) : raw);
  const first = values[0] ?? '';
  switch (filter.filterOperator ?? 'eq') {
    case 'eq':
      return sql.fragment`${column} = ${value(first)}`;
    case 'ne':
      return sql.fragment`${column} <> ${value(first)}`;
    case 'lt':
      return sql.fragment`${column} < ${value(first)}`;
    case 'lte':
      return sql.fragment`${column} <= ${value(first)}`;
    case 'gt':
      return sql.fragment`${column} > ${value(first)}`;
    case 'gte':
      return sql.fragment`${column} >= ${value(first)}`;
    case 'in':
      return isTime
        ? sql.fragment`${column} = ANY(${sql.array(values.map((v) => new Date(v).toISOString()), 'timestamptz')})`
        : sql.fragment`${column} = ANY(${sql.array(values, 'text')})`;
    case 'not_in':
      return isTime
        ? sql.fragment`${column} <> ALL(${sql.array(values.map((v) => new Date(v).toISOString()), 'timestamptz')})`
        : sql.fragment`${column} <> ALL(${sql.array(values, 'text')})`;
    case 'contains':
      return sql.fragment`${sql.identifier(['m', filter.filterField])}::text LIKE ${`%${escapeLike(first)}%`}`;
    case 'starts_with':
      return sql.fragment`${sql.identifier(['m', filter.filterField])}::text LIKE ${`${escapeLike(first)}%`}`;
    case 'ends_with':
      return sql.fragment`${sql.identifier(['m', filter.filterField])}::text LIKE ${`%${escapeLike(first)}`}`;
  }
}

/** A page of an organization's members with their users, and how many match in all (better-auth's listMembers). */
export async function listMembers(
  ctx: OrganizationPorts,
  organizationId: string,
  page: Pick<ListMembersQuery, 'sortBy' | 'sortDirection' | 'filterField' | 'filterOperator' | 'filterValue'> & {
    readonly limit: number;
    readonly offset: number;
  },
): Promise<MemberPage> {
  const where = sql.fragment`m."organizationId" = ${organizationId} AND ${memberFilter(page)}`;
  const direction = page.sortDirection === 'desc' ? sql.fragment`DESC` : sql.fragment`ASC`;
  const order = page.sortBy
    ? sql.fragment`${sql.identifier(['m', page.sortBy])} ${direction}, m.id ${direction}`
    : sql.fragment`m."createdAt", m.id`;
  const [rows, total] = await Promise.all([
    ctx.pool.any(sql.unsafe`
      SELECT ${memberUserColumns} FROM member m JOIN "user" u ON u.id = m."userId"
      WHERE ${where} ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}`),
    ctx.pool.oneFirst(sql.unsafe`SELECT count(*) FROM member m JOIN "user" u ON u.id = m."userId" WHERE ${where}`),
  ]);
  return { members: (rows as readonly MemberUserRow[]).map(toMemberWithUser), total: Number(total) };
}
