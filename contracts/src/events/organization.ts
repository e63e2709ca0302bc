import { z } from 'zod';
import { defineEvent } from './define-event.ts';

/**
 * Organizations. One stream per organization, `organization-<organizationId>`, holds the organization, its
 * members, invitations, teams and team members: every rule that counts (the membership limit, the last
 * owner, one pending invitation per address) is decided on that one stream and appended against its
 * version, so two racing commands cannot both pass a check. The slug is reserved on
 * `organization-slug-<slug>`, as an email is on `email-<email>`.
 *
 * Roles are stored as better-auth stores them: a comma-separated string without padding ("admin,member").
 */

const organizationId = z.string();

/** Metadata is a record of string to any, carried as the JSON text the read model stores. */
const organizationMetadataText = z.string().nullable();

export const OrganizationCreated = defineEvent(
  'organization.created.v1',
  z.object({
    organizationId,
    name: z.string(),
    slug: z.string(),
    logo: z.string().nullable(),
    metadata: organizationMetadataText,
    createdByUserId: z.string(),
  }),
);

/** Only the fields that changed are present; `slug` moves the reservation in the same atomic write. */
export const OrganizationUpdated = defineEvent(
  'organization.updated.v1',
  z.object({
    organizationId,
    name: z.string().optional(),
    slug: z.string().optional(),
    logo: z.string().nullable().optional(),
    metadata: organizationMetadataText.optional(),
  }),
);

/**
 * The organization is gone with its members, invitations and teams. `memberUserIds` names who was still a
 * member, so readers can clear it as the active organization of their sessions without another lookup.
 */
export const OrganizationDeleted = defineEvent(
  'organization.deleted.v1',
  z.object({ organizationId, slug: z.string(), memberUserIds: z.array(z.string()) }),
);

/** The events that give an organization its name (or take it away): what a reader of its stream needs to name it. */
export const organizationNamingTypes: ReadonlySet<string> = new Set([OrganizationCreated.type, OrganizationUpdated.type, OrganizationDeleted.type]);

const memberJoinRoutes = ['creator', 'added', 'invitation'] as const;

export const MemberAdded = defineEvent(
  'organization.member_added.v1',
  z.object({
    organizationId,
    memberId: z.string(),
    userId: z.string(),
    role: z.string().min(1),
    teamId: z.string().nullable(),
    via: z.enum(memberJoinRoutes),
  }),
);

export const MemberRoleChanged = defineEvent(
  'organization.member_role_changed.v1',
  z.object({ organizationId, memberId: z.string(), userId: z.string(), role: z.string().min(1) }),
);

const memberLeaveReasons = ['removed', 'left', 'user_deleted'] as const;

/** The member is gone, and with it the user's team memberships in this organization. */
export const MemberRemoved = defineEvent(
  'organization.member_removed.v1',
  z.object({ organizationId, memberId: z.string(), userId: z.string(), reason: z.enum(memberLeaveReasons) }),
);

/** `email` is lower-cased. The invitation id is what the invitation mail's link carries. */
export const InvitationCreated = defineEvent(
  'organization.invitation_created.v1',
  z.object({
    organizationId,
    invitationId: z.string(),
    email: z.string(),
    role: z.string().min(1),
    teamId: z.string().nullable(),
    inviterId: z.string(),
    expiresAt: z.string(),
  }),
);

/** A pending invitation was sent again: it now expires at `expiresAt`. */
export const InvitationResent = defineEvent(
  'organization.invitation_resent.v1',
  z.object({ organizationId, invitationId: z.string(), inviterId: z.string(), expiresAt: z.string() }),
);

export const InvitationAccepted = defineEvent(
  'organization.invitation_accepted.v1',
  z.object({ organizationId, invitationId: z.string(), userId: z.string() }),
);

export const InvitationRejected = defineEvent(
  'organization.invitation_rejected.v1',
  z.object({ organizationId, invitationId: z.string(), userId: z.string() }),
);

export const InvitationCanceled = defineEvent(
  'organization.invitation_canceled.v1',
  z.object({ organizationId, invitationId: z.string(), byUserId: z.string() }),
);

export const TeamCreated = defineEvent(
  'organization.team_created.v1',
  z.object({ organizationId, teamId: z.string(), name: z.string().min(1) }),
);

export const TeamUpdated = defineEvent(
  'organization.team_updated.v1',
  z.object({ organizationId, teamId: z.string(), name: z.string().min(1) }),
);

/** The team is gone with its team members. */
export const TeamRemoved = defineEvent('organization.team_removed.v1', z.object({ organizationId, teamId: z.string() }));

export const TeamMemberAdded = defineEvent(
  'organization.team_member_added.v1',
  z.object({ organizationId, teamId: z.string(), teamMemberId: z.string(), userId: z.string() }),
);

export const TeamMemberRemoved = defineEvent(
  'organization.team_member_removed.v1',
  z.object({ organizationId, teamId: z.string(), teamMemberId: z.string(), userId: z.string() }),
);

/** Stream `organization-slug-<slug>`. */
export const OrganizationSlugReserved = defineEvent(
  'organization.slug_reserved.v1',
  z.object({ slug: z.string(), organizationId }),
);

export const OrganizationSlugReleased = defineEvent(
  'organization.slug_released.v1',
  z.object({ slug: z.string(), organizationId }),
);

/**
 * Stream `session-<sessionId>`: the organization and team the session works in (better-auth's
 * `activeOrganizationId` and `activeTeamId`), both whole values after the change. Leaving, removal and
 * deletion clear them without a session event: readers derive that from the organization's events.
 */
export const SessionActiveOrganizationChanged = defineEvent(
  'session.active_organization_changed.v1',
  z.object({
    sessionId: z.string(),
    userId: z.string(),
    activeOrganizationId: z.string().nullable(),
    activeTeamId: z.string().nullable(),
  }),
);

/**
 * Stream `user-organizations-<userId>`: the organizations a user belongs to, so that a rule counting them
 * (the organization limit) and a deletion that must leave them all are decided on the log. Each change of
 * membership is appended here in the same atomic write as the organization's own event.
 */
export const OrganizationJoined = defineEvent('organization_index.joined.v1', z.object({ userId: z.string(), organizationId }));

export const OrganizationLeft = defineEvent('organization_index.left.v1', z.object({ userId: z.string(), organizationId }));
