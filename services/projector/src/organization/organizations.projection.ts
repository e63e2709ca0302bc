import { sql, type PostgresProjection, type ProjectedEvent, type ProjectionSql } from '@portcullis/platform';
import { ERASED, projectionEventTypes, projectionNames } from '@portcullis/contracts';
import { instant, PendingRows } from '../pending-rows.ts';

type OrganizationRow = { id: string; name: string; slug: string; logo: string | null; metadata: string | null; createdAt: string };
type MemberRow = { id: string; organizationId: string; userId: string; role: string; teamId: string | null; createdAt: string };
type InvitationRow = {
  id: string;
  organizationId: string;
  email: string;
  role: string;
  status: string;
  teamId: string | null;
  inviterId: string;
  expiresAt: string;
  createdAt: string;
};
type TeamRow = { id: string; name: string; organizationId: string; createdAt: string; updatedAt: string | null };
type TeamMemberRow = { id: string; teamId: string; userId: string; createdAt: string };

function pendingTables() {
  return {
    organizations: new PendingRows<OrganizationRow>('organization', 'id', {
      id: 'text',
      name: 'text',
      slug: 'text',
      logo: 'text',
      metadata: 'text',
      createdAt: 'timestamptz',
    }),
    members: new PendingRows<MemberRow>('member', 'id', {
      id: 'text',
      organizationId: 'text',
      userId: 'text',
      role: 'text',
      teamId: 'text',
      createdAt: 'timestamptz',
    }),
    invitations: new PendingRows<InvitationRow>('invitation', 'id', {
      id: 'text',
      organizationId: 'text',
      email: 'text',
      role: 'text',
      status: 'text',
      teamId: 'text',
      inviterId: 'text',
      expiresAt: 'timestamptz',
      createdAt: 'timestamptz',
    }),
    teams: new PendingRows<TeamRow>('team', 'id', { id: 'text', name: 'text', organizationId: 'text', createdAt: 'timestamptz', updatedAt: 'timestamptz' }),
    teamMembers: new PendingRows<TeamMemberRow>('teamMember', 'id', { id: 'text', teamId: 'text', userId: 'text', createdAt: 'timestamptz' }),
  };
}
type Pending = ReturnType<typeof pendingTables>;

/**
 * The event applied to this batch's new rows, in memory, as `apply` would change them: true when it was.
 * Only creations and changes by a row's id; whatever removes rows by another column goes through `apply`.
 */
function heldInMemory(pending: Pending, { event, recorded }: ProjectedEvent): boolean {
  const at = instant(recorded.metadata.occurredAt);
  switch (event.type) {
    case 'organization.created.v1': {
      const o = event.data;
      return pending.organizations.add({ id: o.organizationId, name: o.name, slug: o.slug, logo: o.logo, metadata: o.metadata, createdAt: at });
    }
    case 'organization.updated.v1': {
      const o = event.data;
      const row = pending.organizations.get(o.organizationId);
      if (!row) return false;
      if (o.name !== undefined) row.name = o.name;
      if (o.slug !== undefined) row.slug = o.slug;
      if (o.logo !== undefined) row.logo = o.logo ?? null;
      if (o.metadata !== undefined) row.metadata = o.metadata ?? null;
      return true;
    }
    case 'organization.member_added.v1': {
      const m = event.data;
      return pending.members.add({ id: m.memberId, organizationId: m.organizationId, userId: m.userId, role: m.role, teamId: m.teamId, createdAt: at });
    }
    case 'organization.member_role_changed.v1': {
      const row = pending.members.get(event.data.memberId);
      if (row) row.role = event.data.role;
      return row !== undefined;
    }
    case 'organization.invitation_created.v1': {
      const i = event.data;
      return pending.invitations.add({
        id: i.invitationId,
        organizationId: i.organizationId,
        email: i.email,
        role: i.role,
        status: 'pending',
        teamId: i.teamId,
        inviterId: i.inviterId,
        expiresAt: instant(i.expiresAt),
        createdAt: at,
      });
    }
    case 'organization.invitation_resent.v1': {
      const row = pending.invitations.get(event.data.invitationId);
      if (row) row.expiresAt = instant(event.data.expiresAt);
      return row !== undefined;
    }
    case 'organization.invitation_accepted.v1':
    case 'organization.invitation_rejected.v1':
    case 'organization.invitation_canceled.v1': {
      const row = pending.invitations.get(event.data.invitationId);
      if (row) row.status = INVITATION_STATUS[event.type];
      return row !== undefined;
    }
    case 'organization.team_created.v1': {
      const t = event.data;
      return pending.teams.add({ id: t.teamId, name: t.name, organizationId: t.organizationId, createdAt: at, updatedAt: null });
    }
    case 'organization.team_updated.v1': {
      const row = pending.teams.get(event.data.teamId);
      if (!row) return false;
      row.name = event.data.name;
      row.updatedAt = at;
      return true;
    }
    case 'organization.team_member_added.v1': {
      const t = event.data;
      return pending.teamMembers.add({ id: t.teamMemberId, teamId: t.teamId, userId: t.userId, createdAt: at });
    }
    default:
      return false;
  }
}

const INVITATION_STATUS = {
  'organization.invitation_accepted.v1': 'accepted',
  'organization.invitation_rejected.v1': 'rejected',
  'organization.invitation_canceled.v1': 'canceled',
} as const;

/** Statements that find their one row by its id: one not among the batch's new ones, so they need not be written first. */
const BY_KEY = new Set<string>([
  'organization.updated.v1',
  'organization.member_role_changed.v1',
  'organization.invitation_resent.v1',
  'organization.invitation_accepted.v1',
  'organization.invitation_rejected.v1',
  'organization.invitation_canceled.v1',
  'organization.team_updated.v1',
]);

/**
 * `organization`, `member`, `invitation`, `team` and `teamMember` rows (better-auth's names). Times are the
 * decision times the events carry. Every removal takes what hangs off the removed row with it, and every
 * statement is keyed so that it does nothing the second time: a deleted user's memberships are removed both
 * by `user.deleted.v1` and by the organizations' own `member_removed` events, in whichever order they land.
 */
export const organizationsProjection: PostgresProjection = {
  name: projectionNames.organizations,
  // Its rows hold what the events' data says and when; where a request came from is the audit index's.
  reads: { metadata: ['occurredAt'] },
  tables: ['organization', 'member', 'invitation', 'team', 'teamMember'],
  // Never found by slug or invitee's email; every other index serves one of its statements.
  indexesAfterLoad: ['organization_slug_key', 'invitation_email'],
  handles: projectionEventTypes[projectionNames.organizations],
  /** A replay's batch is mostly new organizations and members: written in a statement per table. */
  async applyAll(tx, events) {
    const pending = pendingTables();
    const flush = async (): Promise<void> => {
      for (const rows of Object.values(pending)) await rows.flush(tx);
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
      case 'organization.created.v1': {
        const o = event.data;
        await tx.query(sql.unsafe`
          INSERT INTO organization (id, name, slug, logo, metadata, "createdAt")
          VALUES (${o.organizationId}, ${o.name}, ${o.slug}, ${o.logo}, ${o.metadata}, ${at})`);
        return;
      }
      case 'organization.updated.v1': {
        const o = event.data;
        await tx.query(sql.unsafe`
          UPDATE organization SET
            name = CASE WHEN ${o.name !== undefined} THEN ${o.name ?? null}::text ELSE name END,
            slug = CASE WHEN ${o.slug !== undefined} THEN ${o.slug ?? null}::text ELSE slug END,
            logo = CASE WHEN ${o.logo !== undefined} THEN ${o.logo ?? null}::text ELSE logo END,
            metadata = CASE WHEN ${o.metadata !== undefined} THEN ${o.metadata ?? null}::text ELSE metadata END
          WHERE id = ${o.organizationId}`);
        return;
      }
      case 'organization.deleted.v1': {
        const organizationId = event.data.organizationId;
        await tx.query(sql.unsafe`
          DELETE FROM "teamMember" WHERE "teamId" IN (SELECT id FROM team WHERE "organizationId" = ${organizationId})`);
        await tx.query(sql.unsafe`DELETE FROM team WHERE "organizationId" = ${organizationId}`);
        await tx.query(sql.unsafe`DELETE FROM invitation WHERE "organizationId" = ${organizationId}`);
        await tx.query(sql.unsafe`DELETE FROM member WHERE "organizationId" = ${organizationId}`);
        await tx.query(sql.unsafe`DELETE FROM organization WHERE id = ${organizationId}`);
        return;
      }
      case 'organization.member_added.v1': {
        const m = event.data;
        await tx.query(sql.unsafe`
          INSERT INTO member (id, "organizationId", "userId", role, "teamId", "createdAt")
          VALUES (${m.memberId}, ${m.organizationId}, ${m.userId}, ${m.role}, ${m.teamId}, ${at})`);
        return;
      }
      case 'organization.member_role_changed.v1':
        await tx.query(sql.unsafe`UPDATE member SET role = ${event.data.role} WHERE id = ${event.data.memberId}`);
        return;
      case 'organization.member_removed.v1': {
        const { organizationId, memberId, userId, reason } = event.data;
        await tx.query(sql.unsafe`DELETE FROM member WHERE id = ${memberId}`);
        await removeTeamMemberships(tx, userId, organizationId);
        // A deleted user's pending invitations go with the user (see user.deleted.v1); the user's own
        // leaving or removal keeps them, and fetching or accepting one then fails on the inviter.
        if (reason === 'user_deleted') {
          await tx.query(sql.unsafe`
            DELETE FROM invitation
            WHERE "organizationId" = ${organizationId} AND "inviterId" = ${userId} AND status = 'pending'`);
        }
        return;
      }
      case 'organization.invitation_created.v1': {
        const i = event.data;
        await tx.query(sql.unsafe`
          INSERT INTO invitation (id, "organizationId", email, role, status, "teamId", "inviterId", "expiresAt", "createdAt")
          VALUES (${i.invitationId}, ${i.organizationId}, ${i.email}, ${i.role}, 'pending', ${i.teamId}, ${i.inviterId},
                  ${sql.timestamp(new Date(i.expiresAt))}, ${at})`);
        return;
      }
      case 'organization.invitation_resent.v1':
        await tx.query(sql.unsafe`
          UPDATE invitation SET "expiresAt" = ${sql.timestamp(new Date(event.data.expiresAt))} WHERE id = ${event.data.invitationId}`);
        return;
      case 'organization.invitation_accepted.v1':
        await setInvitationStatus(tx, event.data.invitationId, 'accepted');
        return;
      case 'organization.invitation_rejected.v1':
        await setInvitationStatus(tx, event.data.invitationId, 'rejected');
        return;
      case 'organization.invitation_canceled.v1':
        await setInvitationStatus(tx, event.data.invitationId, 'canceled');
        return;
      case 'organization.team_created.v1': {
        const t = event.data;
        await tx.query(sql.unsafe`
          INSERT INTO team (id, name, "organizationId", "createdAt", "updatedAt")
          VALUES (${t.teamId}, ${t.name}, ${t.organizationId}, ${at}, NULL)`);
        return;
      }
      case 'organization.team_updated.v1':
        await tx.query(sql.unsafe`UPDATE team SET name = ${event.data.name}, "updatedAt" = ${at} WHERE id = ${event.data.teamId}`);
        return;
      case 'organization.team_removed.v1': {
        const { organizationId, teamId } = event.data;
        await tx.query(sql.unsafe`DELETE FROM "teamMember" WHERE "teamId" = ${teamId}`);
        await tx.query(sql.unsafe`DELETE FROM team WHERE id = ${teamId}`);
        // Pending invitations stop naming the team (as better-auth does), so accepting one later cannot
        // join a team that is gone; the write side's state drops it likewise.
        await tx.query(sql.unsafe`
          UPDATE invitation
          SET "teamId" = NULLIF(array_to_string(array_remove(string_to_array("teamId", ','), ${teamId}), ','), '')
          WHERE "organizationId" = ${organizationId} AND status = 'pending'
            AND ${teamId} = ANY (string_to_array("teamId", ','))`);
        return;
      }
      case 'organization.team_member_added.v1': {
        const t = event.data;
        await tx.query(sql.unsafe`
          INSERT INTO "teamMember" (id, "teamId", "userId", "createdAt") VALUES (${t.teamMemberId}, ${t.teamId}, ${t.userId}, ${at})`);
        return;
      }
      case 'organization.team_member_removed.v1':
        await tx.query(sql.unsafe`DELETE FROM "teamMember" WHERE "teamId" = ${event.data.teamId} AND "userId" = ${event.data.userId}`);
        return;
      case 'user.deleted.v1': {
        // The organizations' own member_removed events say the same per organization; whichever comes
        // first removes the rows and the other finds nothing left.
        const userId = event.data.userId;
        await tx.query(sql.unsafe`DELETE FROM "teamMember" WHERE "userId" = ${userId}`);
        await tx.query(sql.unsafe`DELETE FROM member WHERE "userId" = ${userId}`);
        await tx.query(sql.unsafe`DELETE FROM invitation WHERE "inviterId" = ${userId} AND status = 'pending'`);
        // Invitations to the user's address keep no readable address (issue 25), whichever of this and the
        // api's erasure comes first (the address reads as erased here once the key is gone).
        if (event.data.email !== ERASED) {
          await tx.query(sql.unsafe`UPDATE invitation SET email = ${ERASED} WHERE lower(email) = ${event.data.email.toLowerCase()}`);
        }
        return;
      }
      default:
        return;
    }
  },
};

/** The user's rows in the teams of one organization: a member who goes leaves its teams too. */
async function removeTeamMemberships(tx: ProjectionSql, userId: string, organizationId: string): Promise<void> {
  await tx.query(sql.unsafe`
    DELETE FROM "teamMember"
    WHERE "userId" = ${userId} AND "teamId" IN (SELECT id FROM team WHERE "organizationId" = ${organizationId})`);
}

async function setInvitationStatus(tx: ProjectionSql, invitationId: string, status: 'accepted' | 'rejected' | 'canceled'): Promise<void> {
  await tx.query(sql.unsafe`UPDATE invitation SET status = ${status} WHERE id = ${invitationId}`);
}
