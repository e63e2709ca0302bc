import type { Invitation, InvitationStatusValue } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { OrganizationPorts } from './ports.ts';
import { isoTime } from '../read-model.ts';


interface InvitationRow {
  id: string;
  organizationId: string;
  email: string;
  role: string;
  status: InvitationStatusValue;
  teamId: string | null;
  inviterId: string;
  expiresAt: number;
  createdAt: number;
}

const invitationColumns = sql.fragment`i.id, i."organizationId", i.email, i.role, i.status, i."teamId", i."inviterId", i."expiresAt", i."createdAt"`;

function toInvitation(row: InvitationRow): Invitation {
  return {
    id: row.id,
    organizationId: row.organizationId,
    email: row.email,
    role: row.role,
    status: row.status,
    teamId: row.teamId,
    inviterId: row.inviterId,
    expiresAt: isoTime(row.expiresAt),
    createdAt: isoTime(row.createdAt),
  };
}

export interface InvitationWithContext {
  readonly invitation: Invitation;
  /** Null when the organization is gone. */
  readonly organization: { readonly name: string; readonly slug: string } | null;
  /** The inviter's address while the inviter is still a member of the organization; null once not. */
  readonly inviterMemberEmail: string | null;
}

/** An invitation with what its recipient is shown beside it: the organization, and who invited them. */
export async function findInvitationWithContext(ctx: OrganizationPorts, invitationId: string): Promise<InvitationWithContext | null> {
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT ${invitationColumns},
           o.name AS organization_name, o.slug AS organization_slug, u.email AS inviter_email
    FROM invitation i
    LEFT JOIN organization o ON o.id = i."organizationId"
    LEFT JOIN member m ON m."organizationId" = i."organizationId" AND m."userId" = i."inviterId"
    LEFT JOIN "user" u ON u.id = m."userId"
    WHERE i.id = ${invitationId}`)) as
    | (InvitationRow & { organization_name: string | null; organization_slug: string | null; inviter_email: string | null })
    | null;
  if (!row) return null;
  return {
    invitation: toInvitation(row),
    organization: row.organization_name !== null && row.organization_slug !== null ? { name: row.organization_name, slug: row.organization_slug } : null,
    inviterMemberEmail: row.inviter_email,
  };
}

/** The organization an invitation belongs to, so the command can be decided on that organization's stream. */
export async function invitationOrganizationId(ctx: OrganizationPorts, invitationId: string): Promise<string | null> {
  return (await ctx.pool.maybeOneFirst(sql.unsafe`SELECT "organizationId" FROM invitation WHERE id = ${invitationId}`));
}

/** Every invitation of an organization, whatever its status (better-auth's listInvitations), oldest first. */
export async function listOrganizationInvitations(ctx: OrganizationPorts, organizationId: string): Promise<Invitation[]> {
  const rows = (await ctx.pool.any(sql.unsafe`
    SELECT ${invitationColumns} FROM invitation i
    WHERE i."organizationId" = ${organizationId}
    ORDER BY i."createdAt", i.id`)) as readonly InvitationRow[];
  return rows.map(toInvitation);
}

/** The pending invitations addressed to `email` (lower-cased), expired ones included as better-auth lists them. */
export async function listPendingInvitationsFor(ctx: OrganizationPorts, email: string): Promise<(Invitation & { organizationName: string })[]> {
  const rows = (await ctx.pool.any(sql.unsafe`
    SELECT ${invitationColumns}, o.name AS organization_name
    FROM invitation i JOIN organization o ON o.id = i."organizationId"
    WHERE i.email = ${email.toLowerCase()} AND i.status = 'pending'
    ORDER BY i."createdAt", i.id`)) as readonly (InvitationRow & { organization_name: string })[];
  return rows.map((row) => ({ ...toInvitation(row), organizationName: row.organization_name }));
}

/** The id of the user holding an address (lower-cased), from the `user` read model. */
export async function userIdByEmail(ctx: OrganizationPorts, email: string): Promise<string | null> {
  return (await ctx.pool.maybeOneFirst(sql.unsafe`SELECT id FROM "user" WHERE email = ${email.toLowerCase()}`));
}
