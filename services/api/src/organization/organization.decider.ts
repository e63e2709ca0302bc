import {
  DomainError,
  MemberAdded,
  OrganizationCreated,
  OrganizationDeleted,
  OrganizationSlugReleased,
  OrganizationSlugReserved,
  OrganizationUpdated,
  TeamCreated,
  TeamMemberAdded,
  creatorRole,
  rolesGrant,
  streamModel,
  type DomainEvent,
  type ErrorCode,
} from '@portcullis/contracts';
import { memberByUserId, type ActiveOrganization, type OrganizationState } from './organization.state.ts';

/**
 * The organization itself: create, update, delete, decided on `organization-<id>`; and its slug, reserved on
 * `organization-slug-<slug>` in the same atomic append, so of two organizations racing for one slug exactly
 * one gets it. Refusals come in better-auth 1.7's order (`routes/crud-org.ts`).
 */

type OrganizationMetadata = Record<string, unknown>;

interface CreationPolicy {
  readonly allowCreate: boolean;
  readonly organizationLimit: number | null;
}

export interface CreateOrganization {
  readonly type: 'create';
  readonly organizationId: string;
  readonly name: string;
  readonly slug: string;
  readonly logo: string | null;
  readonly metadata: OrganizationMetadata | undefined;
  readonly creatorUserId: string;
  readonly memberId: string;
  /** better-auth's default team (teams and defaultTeam on): named as the organization, holding the creator. */
  readonly defaultTeam: { readonly teamId: string; readonly teamMemberId: string } | null;
  /** A server call (AUTH_SERVER_API_KEY) creating for a user is not held to `allowCreate`. */
  readonly byServer: boolean;
  /** How many organizations the creator belongs to now. */
  readonly creatorMemberships: number;
  readonly policy: CreationPolicy;
}

export interface OrganizationChanges {
  readonly name?: string | undefined;
  readonly slug?: string | undefined;
  readonly logo?: string | null | undefined;
  readonly metadata?: OrganizationMetadata | undefined;
}

interface UpdateOrganization {
  readonly type: 'update';
  readonly actorUserId: string;
  readonly changes: OrganizationChanges;
}

interface DeleteOrganization {
  readonly type: 'delete';
  readonly actorUserId: string;
}

export type OrganizationCommand = CreateOrganization | UpdateOrganization | DeleteOrganization;

/** better-auth stores metadata as JSON text; an absent metadata stays absent. */
function metadataText(metadata: OrganizationMetadata | undefined): string | null {
  return metadata === undefined ? null : JSON.stringify(metadata);
}

function decideCreate(command: CreateOrganization, state: OrganizationState): DomainEvent[] {
  if (!command.policy.allowCreate && !command.byServer) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION');
  const limit = command.policy.organizationLimit;
  if (limit !== null && command.creatorMemberships >= limit) throw new DomainError('YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS');
  // Ids are fresh; a stream that already holds something is a reused id, never to be overwritten.
  if (state.status !== 'none') throw new DomainError('ORGANIZATION_ALREADY_EXISTS');
  const organizationId = command.organizationId;
  const events: DomainEvent[] = [
    OrganizationCreated({
      organizationId,
      name: command.name,
      slug: command.slug,
      logo: command.logo,
      metadata: metadataText(command.metadata),
      createdByUserId: command.creatorUserId,
    }),
    MemberAdded({ organizationId, memberId: command.memberId, userId: command.creatorUserId, role: creatorRole, teamId: null, via: 'creator' }),
  ];
  if (command.defaultTeam) {
    const { teamId, teamMemberId } = command.defaultTeam;
    events.push(
      TeamCreated({ organizationId, teamId, name: command.name }),
      TeamMemberAdded({ organizationId, teamId, teamMemberId, userId: command.creatorUserId }),
    );
  }
  return events;
}

/**
 * The caller's organization when they hold the permission. better-auth finds the member before the
 * organization, so an organization that is gone (or never was) answers as one the caller is not in.
 */
function requirePermittedMember(
  state: OrganizationState,
  actorUserId: string,
  action: 'update' | 'delete',
  refusal: ErrorCode,
): ActiveOrganization {
  const member = state.status === 'active' ? memberByUserId(state, actorUserId) : null;
  if (state.status !== 'active' || !member) throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
  if (!rolesGrant(member.role, { organization: [action] })) throw new DomainError(refusal);
  return state;
}

function decideUpdate(command: UpdateOrganization, state: OrganizationState): DomainEvent[] {
  const org = requirePermittedMember(state, command.actorUserId, 'update', 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION');
  const { name, slug, logo, metadata } = command.changes;
  const text = metadata === undefined ? undefined : metadataText(metadata);
  // Only what differs is recorded: an update that changes nothing leaves the log as it was.
  const changed = {
    ...(name !== undefined && name !== org.name ? { name } : {}),
    ...(slug !== undefined && slug !== org.slug ? { slug } : {}),
    ...(logo !== undefined && logo !== org.logo ? { logo } : {}),
    ...(text !== undefined && text !== org.metadata ? { metadata: text } : {}),
  };
  if (Object.keys(changed).length === 0) return [];
  return [OrganizationUpdated({ organizationId: org.id, ...changed })];
}

function decideDelete(command: DeleteOrganization, state: OrganizationState): DomainEvent[] {
  const org = requirePermittedMember(state, command.actorUserId, 'delete', 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION');
  const memberUserIds = [...org.members.values()].map((member) => member.userId);
  return [OrganizationDeleted({ organizationId: org.id, slug: org.slug, memberUserIds })];
}

export function decideOrganization(command: OrganizationCommand, state: OrganizationState): DomainEvent[] {
  switch (command.type) {
    case 'create':
      return decideCreate(command, state);
    case 'update':
      return decideUpdate(command, state);
    case 'delete':
      return decideDelete(command, state);
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
}

/** The slug reservation stream: held by an organization, or free (never taken, or released). */
export type SlugReservationState = { readonly status: 'free' } | { readonly status: 'reserved'; readonly organizationId: string };

export const initialSlugReservation = (): SlugReservationState => ({ status: 'free' });

export function evolveSlugReservation(state: SlugReservationState, event: DomainEvent): SlugReservationState {
  switch (event.type) {
    case 'organization.slug_reserved.v1':
      return { status: 'reserved', organizationId: event.data.organizationId };
    case 'organization.slug_released.v1':
      return state.status === 'reserved' && state.organizationId === event.data.organizationId ? { status: 'free' } : state;
    default:
      return state;
  }
}

/** An organization slug's reservation stream `organization-slug-<slug>`. */
export const slugReservationModel = streamModel('organization-slug', 1, initialSlugReservation, evolveSlugReservation);

export interface ClaimSlug {
  readonly slug: string;
  readonly organizationId: string;
  /** better-auth's word for a taken slug differs between create and update. */
  readonly refusal: 'ORGANIZATION_ALREADY_EXISTS' | 'ORGANIZATION_SLUG_ALREADY_TAKEN' | 'ORGANIZATION_SLUG_TAKEN_ON_UPDATE';
}

/**
 * Reserves a slug for an organization, appended against the version decided on: of two racing claims one
 * append fails, and its retry finds the slug taken. Holding it already is no change.
 */
export function decideSlugClaim(command: ClaimSlug, state: SlugReservationState): DomainEvent[] {
  if (state.status === 'reserved') {
    if (state.organizationId === command.organizationId) return [];
    throw new DomainError(command.refusal);
  }
  return [OrganizationSlugReserved({ slug: command.slug, organizationId: command.organizationId })];
}

export interface ReleaseSlug {
  readonly slug: string;
  readonly organizationId: string;
}

/** Frees the slug an organization moves away from or held when deleted; one it does not hold is left alone. */
export function decideSlugRelease(command: ReleaseSlug, state: SlugReservationState): DomainEvent[] {
  if (state.status !== 'reserved' || state.organizationId !== command.organizationId) return [];
  return [OrganizationSlugReleased({ slug: command.slug, organizationId: command.organizationId })];
}
