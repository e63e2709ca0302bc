import { DomainError, creatorRole, parseRoleList, type SnapshotCodec, type StreamModel, type TimedEvent } from '@portcullis/contracts';

/**
 * What the organization stream's deciders decide on: the organization with its members, invitations and
 * teams, folded from `organization-<id>`. Members carry the time they joined (better-auth's createdAt).
 */
export interface MemberState {
  readonly id: string;
  readonly userId: string;
  readonly role: string;
  readonly teamId: string | null;
  readonly createdAt: string;
}

type InvitationStatus = 'pending' | 'accepted' | 'rejected' | 'canceled';

export interface InvitationState {
  readonly id: string;
  readonly email: string;
  readonly role: string;
  readonly teamId: string | null;
  readonly inviterId: string;
  readonly status: InvitationStatus;
  readonly expiresAt: string;
  readonly createdAt: string;
}

export interface TeamState {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
  readonly updatedAt: string | null;
  /** userId → teamMember id. */
  readonly members: ReadonlyMap<string, string>;
}

export interface ActiveOrganization {
  readonly status: 'active';
  readonly id: string;
  readonly name: string;
  readonly slug: string;
  readonly logo: string | null;
  readonly metadata: string | null;
  readonly createdAt: string;
  /** memberId → member. */
  readonly members: ReadonlyMap<string, MemberState>;
  readonly invitations: ReadonlyMap<string, InvitationState>;
  readonly teams: ReadonlyMap<string, TeamState>;
}

export type OrganizationState = { readonly status: 'none' } | { readonly status: 'deleted'; readonly id: string } | ActiveOrganization;

export const initialOrganizationState = (): OrganizationState => ({ status: 'none' });

function withEntry<K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> {
  return new Map(map).set(key, value);
}

function withoutEntry<K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> {
  const next = new Map(map);
  next.delete(key);
  return next;
}

function setInvitationStatus(org: ActiveOrganization, invitationId: string, status: InvitationStatus): ActiveOrganization {
  const invitation = org.invitations.get(invitationId);
  if (!invitation) return org;
  return { ...org, invitations: withEntry(org.invitations, invitationId, { ...invitation, status }) };
}

function withoutTeamMember(org: ActiveOrganization, userId: string, teamId?: string): ActiveOrganization {
  let teams = org.teams;
  for (const team of org.teams.values()) {
    if ((teamId === undefined || team.id === teamId) && team.members.has(userId)) {
      teams = withEntry(teams, team.id, { ...team, members: withoutEntry(team.members, userId) });
    }
  }
  return teams === org.teams ? org : { ...org, teams };
}

export function evolveOrganization(state: OrganizationState, timed: TimedEvent): OrganizationState {
  const { event, occurredAt: at } = timed;
  if (event.type === 'organization.created.v1') {
    const d = event.data;
    return {
      status: 'active',
      id: d.organizationId,
      name: d.name,
      slug: d.slug,
      logo: d.logo,
      metadata: d.metadata,
      createdAt: at,
      members: new Map(),
      invitations: new Map(),
      teams: new Map(),
    };
  }
  if (state.status !== 'active') return state;
  switch (event.type) {
    case 'organization.updated.v1': {
      const { organizationId: _id, ...changes } = event.data;
      return {
        ...state,
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.slug !== undefined ? { slug: changes.slug } : {}),
        ...(changes.logo !== undefined ? { logo: changes.logo } : {}),
        ...(changes.metadata !== undefined ? { metadata: changes.metadata } : {}),
      };
    }
    case 'organization.deleted.v1':
      return { status: 'deleted', id: state.id };
    case 'organization.member_added.v1': {
      const d = event.data;
      return {
        ...state,
        members: withEntry(state.members, d.memberId, { id: d.memberId, userId: d.userId, role: d.role, teamId: d.teamId, createdAt: at }),
      };
    }
    case 'organization.member_role_changed.v1': {
      const member = state.members.get(event.data.memberId);
      if (!member) return state;
      return { ...state, members: withEntry(state.members, member.id, { ...member, role: event.data.role }) };
    }
    case 'organization.member_removed.v1': {
      const removed = withoutTeamMember({ ...state, members: withoutEntry(state.members, event.data.memberId) }, event.data.userId);
      // A deleted user's pending invitations go with the user, as they do from the read model.
      if (event.data.reason !== 'user_deleted') return removed;
      const invitations = new Map(removed.invitations);
      for (const invitation of removed.invitations.values()) {
        if (invitation.status === 'pending' && invitation.inviterId === event.data.userId) invitations.delete(invitation.id);
      }
      return { ...removed, invitations };
    }
    case 'organization.invitation_created.v1': {
      const d = event.data;
      return {
        ...state,
        invitations: withEntry(state.invitations, d.invitationId, {
          id: d.invitationId,
          email: d.email,
          role: d.role,
          teamId: d.teamId,
          inviterId: d.inviterId,
          status: 'pending',
          expiresAt: d.expiresAt,
          createdAt: at,
        }),
      };
    }
    case 'organization.invitation_resent.v1': {
      const invitation = state.invitations.get(event.data.invitationId);
      if (!invitation) return state;
      return {
        ...state,
        invitations: withEntry(state.invitations, invitation.id, { ...invitation, expiresAt: event.data.expiresAt }),
      };
    }
    case 'organization.invitation_accepted.v1':
      return setInvitationStatus(state, event.data.invitationId, 'accepted');
    case 'organization.invitation_rejected.v1':
      return setInvitationStatus(state, event.data.invitationId, 'rejected');
    case 'organization.invitation_canceled.v1':
      return setInvitationStatus(state, event.data.invitationId, 'canceled');
    case 'organization.team_created.v1':
      return {
        ...state,
        teams: withEntry(state.teams, event.data.teamId, {
          id: event.data.teamId,
          name: event.data.name,
          createdAt: at,
          updatedAt: null,
          members: new Map(),
        }),
      };
    case 'organization.team_updated.v1': {
      const team = state.teams.get(event.data.teamId);
      if (!team) return state;
      return { ...state, teams: withEntry(state.teams, team.id, { ...team, name: event.data.name, updatedAt: at }) };
    }
    case 'organization.team_removed.v1': {
      // Pending invitations stop naming the team (better-auth's rule), so none can join a team that is gone.
      const teamId = event.data.teamId;
      const invitations = new Map(state.invitations);
      for (const invitation of state.invitations.values()) {
        const teamIds = invitation.teamId?.split(',') ?? [];
        if (invitation.status !== 'pending' || !teamIds.includes(teamId)) continue;
        const remaining = teamIds.filter((id) => id !== teamId).join(',');
        invitations.set(invitation.id, { ...invitation, teamId: remaining === '' ? null : remaining });
      }
      return { ...state, teams: withoutEntry(state.teams, teamId), invitations };
    }
    case 'organization.team_member_added.v1': {
      const team = state.teams.get(event.data.teamId);
      if (!team) return state;
      return {
        ...state,
        teams: withEntry(state.teams, team.id, { ...team, members: withEntry(team.members, event.data.userId, event.data.teamMemberId) }),
      };
    }
    case 'organization.team_member_removed.v1':
      return withoutTeamMember(state, event.data.userId, event.data.teamId);
    default:
      return state;
  }
}

/** Deciders take a state that may be anything; most commands need a live organization. */
export function requireOrganization(state: OrganizationState): ActiveOrganization {
  if (state.status !== 'active') throw new DomainError('ORGANIZATION_NOT_FOUND');
  return state;
}

export function memberByUserId(org: ActiveOrganization, userId: string): MemberState | null {
  for (const member of org.members.values()) if (member.userId === userId) return member;
  return null;
}

export function ownerCount(org: ActiveOrganization): number {
  let owners = 0;
  for (const member of org.members.values()) if (parseRoleList(member.role).includes(creatorRole)) owners += 1;
  return owners;
}

export function isInvitationOpen(invitation: InvitationState, now: Date): boolean {
  return invitation.status === 'pending' && Date.parse(invitation.expiresAt) >= now.getTime();
}

/**
 * The one pending invitation of an address, expired or not (better-auth's findPendingInvitation skips
 * expired ones): re-inviting renews it rather than leaving a stale pending row beside a new one.
 */
export function pendingInvitationFor(org: ActiveOrganization, email: string): InvitationState | null {
  for (const invitation of org.invitations.values()) {
    if (invitation.status === 'pending' && invitation.email === email) return invitation;
  }
  return null;
}

type TeamSnapshot = Omit<TeamState, 'members'> & { readonly members: Array<[string, string]> };
type OrganizationSnapshot = Omit<ActiveOrganization, 'members' | 'invitations' | 'teams'> & {
  readonly members: Array<[string, MemberState]>;
  readonly invitations: Array<[string, InvitationState]>;
  readonly teams: Array<[string, TeamSnapshot]>;
};

/** The organization as a snapshot keeps it: its maps as lists of entries, which JSON can hold. */
export const organizationSnapshot: SnapshotCodec<OrganizationState> = {
  encode(state): OrganizationState | OrganizationSnapshot {
    if (state.status !== 'active') return state;
    return {
      ...state,
      members: [...state.members],
      invitations: [...state.invitations],
      teams: [...state.teams].map(([id, team]): [string, TeamSnapshot] => [id, { ...team, members: [...team.members] }]),
    };
  },
  decode(value): OrganizationState {
    if ((value as OrganizationState).status !== 'active') return value as OrganizationState;
    const kept = value as OrganizationSnapshot;
    return {
      ...kept,
      members: new Map(kept.members),
      invitations: new Map(kept.invitations),
      teams: new Map(kept.teams.map(([id, team]) => [id, { ...team, members: new Map(team.members) }])),
    };
  },
};

/** The organization stream as its commands fold it. */
export const organizationModel: StreamModel<OrganizationState> = {
  name: 'organization',
  revision: 1,
  initial: initialOrganizationState,
  evolve: (state, event, time) => evolveOrganization(state, { event, occurredAt: time.occurredAt }),
  snapshot: organizationSnapshot,
};
