import type { Team, TeamMember } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { OrganizationPorts } from './ports.ts';
import { isoTime } from '../read-model.ts';

/** Reads of the `team` and `teamMember` read models (better-auth's tables), answered in better-auth's shapes. */


interface TeamRow {
  id: string;
  name: string;
  organizationId: string;
  createdAt: number;
  updatedAt: number | null;
}

interface TeamMemberRow {
  id: string;
  teamId: string;
  userId: string;
  createdAt: number;
}

const teamColumns = sql.fragment`t.id, t.name, t."organizationId", t."createdAt", t."updatedAt"`;

/**
 * better-auth stamps `updatedAt` when it creates a team, so its answers always carry one: a team never
 * renamed answers its creation time.
 */
function teamAnswer(row: TeamRow): Team {
  return {
    id: row.id,
    name: row.name,
    organizationId: row.organizationId,
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt ?? row.createdAt),
  };
}

function teamMemberAnswer(row: TeamMemberRow): TeamMember {
  return { id: row.id, teamId: row.teamId, userId: row.userId, createdAt: isoTime(row.createdAt) };
}

export async function findTeam(ctx: OrganizationPorts, teamId: string): Promise<Team | null> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`SELECT ${teamColumns} FROM team t WHERE t.id = ${teamId}`)) as TeamRow | null;
  return row ? teamAnswer(row) : null;
}

export async function listOrganizationTeams(ctx: OrganizationPorts, organizationId: string): Promise<Team[]> {
  const rows = (await ctx.pool.any(sql.unsafe`
    SELECT ${teamColumns} FROM team t WHERE t."organizationId" = ${organizationId}
    ORDER BY t."createdAt", t.id`)) as readonly TeamRow[];
  return rows.map(teamAnswer);
}

/**
 * The teams a user is in, of one organization or (without one) of every organization the user is still a
 * member of: a team membership outliving its organization membership is never shown.
 */
export async function listTeamsOfUser(ctx: OrganizationPorts, userId: string, organizationId: string | null): Promise<Team[]> {
  const inOrganization = organizationId === null ? sql.fragment`` : sql.fragment`AND t."organizationId" = ${organizationId}`;
  const rows = (await ctx.pool.any(sql.unsafe`
    SELECT ${teamColumns} FROM "teamMember" tm
    JOIN team t ON t.id = tm."teamId"
    JOIN member m ON m."organizationId" = t."organizationId" AND m."userId" = tm."userId"
    WHERE tm."userId" = ${userId} ${inOrganization}
    ORDER BY tm."createdAt", t.id`)) as readonly TeamRow[];
  return rows.map(teamAnswer);
}

export async function findTeamMember(ctx: OrganizationPorts, teamId: string, userId: string): Promise<TeamMember | null> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT id, "teamId", "userId", "createdAt" FROM "teamMember"
    WHERE "teamId" = ${teamId} AND "userId" = ${userId}`)) as TeamMemberRow | null;
  return row ? teamMemberAnswer(row) : null;
}

export async function listTeamMembers(ctx: OrganizationPorts, teamId: string): Promise<TeamMember[]> {
  const rows = (await ctx.pool.any(sql.unsafe`
    SELECT id, "teamId", "userId", "createdAt" FROM "teamMember" WHERE "teamId" = ${teamId}
    ORDER BY "createdAt", id`)) as readonly TeamMemberRow[];
  return rows.map(teamMemberAnswer);
}

/** The caller's role in an organization as stored ("admin,member"), or null for a non-member. */
export async function memberRole(ctx: OrganizationPorts, organizationId: string, userId: string): Promise<string | null> {
  return (await ctx.pool.maybeOneFirst(sql.unsafe`
    SELECT role FROM member WHERE "organizationId" = ${organizationId} AND "userId" = ${userId}`));
}
