import {
  DomainError,
  rolesGrant,
  TeamCreated,
  TeamMemberAdded,
  TeamMemberRemoved,
  TeamRemoved,
  TeamUpdated,
  type DomainEvent,
  type ErrorCode,
  type PermissionRequest,
} from '@portcullis/contracts';
import { memberByUserId, type ActiveOrganization, type MemberState, type OrganizationState, type TeamState } from './organization.state.ts';

/**
 * Teams and their members, decided on the organization stream. Refusals come in better-auth 1.7's order
 * (`routes/crud-team.ts`), so a caller failing two checks hears the same one it would from better-auth.
 * Ids come in the command; the limits are configuration the route passes along.
 */

export interface CreateTeam {
  readonly type: 'create-team';
  readonly actorUserId: string;
  readonly teamId: string;
  readonly name: string;
  readonly maximumTeams: number | null;
}

interface UpdateTeam {
  readonly type: 'update-team';
  readonly actorUserId: string;
  readonly teamId: string;
  /** Absent: nothing to change, the team is answered as it is. */
  readonly name: string | undefined;
}

interface RemoveTeam {
  readonly type: 'remove-team';
  readonly actorUserId: string;
  /** The team the caller's session works in: better-auth refuses removing it from under the caller. */
  readonly actorActiveTeamId: string | null;
  readonly teamId: string;
  readonly allowRemovingAllTeams: boolean;
}

interface AddTeamMember {
  readonly type: 'add-team-member';
  readonly actorUserId: string;
  readonly teamId: string;
  readonly userId: string;
  /** Used only when the user is not in the team yet. */
  readonly teamMemberId: string;
  readonly maximumMembersPerTeam: number | null;
}

interface RemoveTeamMember {
  readonly type: 'remove-team-member';
  readonly actorUserId: string;
  readonly teamId: string;
  readonly userId: string;
}

export type TeamCommand = CreateTeam | UpdateTeam | RemoveTeam | AddTeamMember | RemoveTeamMember;

/** The caller's membership; a missing or deleted organization has no members, as in better-auth's lookups. */
function memberOf(state: OrganizationState, userId: string): { org: ActiveOrganization; member: MemberState } | null {
  if (state.status !== 'active') return null;
  const member = memberByUserId(state, userId);
  return member ? { org: state, member } : null;
}

function requireActor(
  state: OrganizationState,
  actorUserId: string,
  permission: PermissionRequest,
  refusals: { notMember: ErrorCode; notAllowed: ErrorCode },
): ActiveOrganization {
  const actor = memberOf(state, actorUserId);
  if (!actor) throw new DomainError(refusals.notMember);
  if (!rolesGrant(actor.member.role, permission)) throw new DomainError(refusals.notAllowed);
  return actor.org;
}

/** Schema-checked at the edge already; kept here so no event can ever carry an empty name. */
function requireTeamName(name: string): string {
  if (name.length < 1) throw new DomainError('VALIDATION_ERROR', { details: '[body.name] Too small: expected string to have >=1 characters' });
  return name;
}

function requireTeam(org: ActiveOrganization, teamId: string): TeamState {
  const team = org.teams.get(teamId);
  if (!team) throw new DomainError('TEAM_NOT_FOUND');
  return team;
}

function createTeam(command: CreateTeam, state: OrganizationState): DomainEvent[] {
  const org = requireActor(state, command.actorUserId, { team: ['create'] }, {
    // better-auth's answer to a non-member creating a team.
    notMember: 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION',
    notAllowed: 'YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION',
  });
  if (command.maximumTeams !== null && org.teams.size >= command.maximumTeams) {
    throw new DomainError('YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS');
  }
  return [TeamCreated({ organizationId: org.id, teamId: command.teamId, name: requireTeamName(command.name) })];
}

function updateTeam(command: UpdateTeam, state: OrganizationState): DomainEvent[] {
  const org = requireActor(state, command.actorUserId, { team: ['update'] }, {
    notMember: 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM',
    notAllowed: 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM',
  });
  const team = requireTeam(org, command.teamId);
  if (command.name === undefined) return [];
  return [TeamUpdated({ organizationId: org.id, teamId: team.id, name: requireTeamName(command.name) })];
}

function removeTeam(command: RemoveTeam, state: OrganizationState): DomainEvent[] {
  const actor = memberOf(state, command.actorUserId);
  if (!actor || command.actorActiveTeamId === command.teamId) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM');
  if (!rolesGrant(actor.member.role, { team: ['delete'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION');
  const team = requireTeam(actor.org, command.teamId);
  if (!command.allowRemovingAllTeams && actor.org.teams.size <= 1) throw new DomainError('UNABLE_TO_REMOVE_LAST_TEAM');
  return [TeamRemoved({ organizationId: actor.org.id, teamId: team.id })];
}

function addTeamMember(command: AddTeamMember, state: OrganizationState): DomainEvent[] {
  const org = requireActor(state, command.actorUserId, { member: ['update'] }, {
    notMember: 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    notAllowed: 'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER',
  });
  if (!memberByUserId(org, command.userId)) throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
  const team = requireTeam(org, command.teamId);
  // Adding someone already in the team answers their membership, as better-auth's findOrCreate does.
  if (team.members.has(command.userId)) return [];
  if (command.maximumMembersPerTeam !== null && team.members.size >= command.maximumMembersPerTeam) {
    throw new DomainError('TEAM_MEMBER_LIMIT_REACHED');
  }
  return [TeamMemberAdded({ organizationId: org.id, teamId: team.id, teamMemberId: command.teamMemberId, userId: command.userId })];
}

function removeTeamMember(command: RemoveTeamMember, state: OrganizationState): DomainEvent[] {
  const org = requireActor(state, command.actorUserId, { member: ['delete'] }, {
    notMember: 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    notAllowed: 'YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER',
  });
  if (!memberByUserId(org, command.userId)) throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
  const team = requireTeam(org, command.teamId);
  const teamMemberId = team.members.get(command.userId);
  if (teamMemberId === undefined) throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_TEAM');
  return [TeamMemberRemoved({ organizationId: org.id, teamId: team.id, teamMemberId, userId: command.userId })];
}

export function decideTeam(command: TeamCommand, state: OrganizationState): DomainEvent[] {
  switch (command.type) {
    case 'create-team':
      return createTeam(command, state);
    case 'update-team':
      return updateTeam(command, state);
    case 'remove-team':
      return removeTeam(command, state);
    case 'add-team-member':
      return addTeamMember(command, state);
    case 'remove-team-member':
      return removeTeamMember(command, state);
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
}

/**
 * The team a session may make its active one: a team of the session's active organization that the
 * caller belongs to. Nothing is written to the organization; the session records the choice.
 */
export function activeTeamFor(state: OrganizationState, input: { readonly teamId: string; readonly userId: string }): TeamState {
  if (state.status !== 'active') throw new DomainError('TEAM_NOT_FOUND');
  const team = requireTeam(state, input.teamId);
  // better-auth answers this one 403 here and 400 where it lists team members.
  if (!team.members.has(input.userId)) throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_TEAM', { status: 403 });
  return team;
}
