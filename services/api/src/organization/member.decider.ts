import {
  DomainError,
  MemberAdded,
  MemberRemoved,
  MemberRoleChanged,
  TeamMemberAdded,
  creatorRole,
  formatRoles,
  isOrganizationRole,
  parseRoleList,
  rolesGrant,
  type DomainEvent,
} from '@portcullis/contracts';
import { memberByUserId, ownerCount, type ActiveOrganization, type MemberState, type OrganizationState } from './organization.state.ts';

/**
 * Members of an organization, decided on its stream, so the membership limit and the last-owner rule hold
 * however many requests race. Refusals come in better-auth 1.7's order (`routes/crud-members.ts`).
 */

export interface AddMember {
  readonly type: 'add';
  readonly memberId: string;
  readonly userId: string;
  /** Whether the user has an account: better-auth asks after the team switch, before anything else. */
  readonly userExists: boolean;
  /** As sent: a role, a comma-separated list, or an array of either. */
  readonly role: string | readonly string[];
  readonly teamId: string | null;
  readonly teamMemberId: string;
  readonly membershipLimit: number;
  readonly teams: { readonly enabled: boolean; readonly maximumMembersPerTeam: number | null };
}

interface UpdateMemberRole {
  readonly type: 'update-role';
  readonly actorUserId: string;
  readonly memberId: string;
  /** As sent: a role, a comma-separated list, or an array of either. */
  readonly role: string | readonly string[];
}

/** Removal names the member by id, or by the user an email belongs to (null: no user has that email). */
export type RemovalTarget = { readonly memberId: string } | { readonly userId: string | null };

interface RemoveMember {
  readonly type: 'remove';
  readonly actorUserId: string;
  readonly target: RemovalTarget;
}

interface LeaveOrganization {
  readonly type: 'leave';
  readonly userId: string;
}

/** The user's account is being deleted: their membership goes with it, owner or not, as a database cascade would. */
interface RemoveDeletedUser {
  readonly type: 'remove-deleted-user';
  readonly userId: string;
}

export type MemberCommand = AddMember | UpdateMemberRole | RemoveMember | LeaveOrganization | RemoveDeletedUser;

function isOwner(member: MemberState): boolean {
  return parseRoleList(member.role).includes(creatorRole);
}

/** The caller's membership; a missing or deleted organization has no members, as in better-auth's lookups. */
function requireActor(state: OrganizationState, userId: string): { org: ActiveOrganization; actor: MemberState } {
  const actor = state.status === 'active' ? memberByUserId(state, userId) : null;
  if (state.status !== 'active' || !actor) throw new DomainError('MEMBER_NOT_FOUND');
  return { org: state, actor };
}

function decideAdd(command: AddMember, state: OrganizationState): DomainEvent[] {
  if (command.teamId !== null && !command.teams.enabled) throw new DomainError('TEAMS_NOT_ENABLED');
  // better-auth answers an unknown user 400 here (404 elsewhere).
  if (!command.userExists) throw new DomainError('USER_NOT_FOUND', { status: 400 });
  if (state.status !== 'active') throw new DomainError('ORGANIZATION_NOT_FOUND');
  if (memberByUserId(state, command.userId)) throw new DomainError('USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION');
  const team = command.teamId === null ? null : state.teams.get(command.teamId);
  if (team === undefined) throw new DomainError('TEAM_NOT_FOUND');
  if (state.members.size >= command.membershipLimit) throw new DomainError('ORGANIZATION_MEMBERSHIP_LIMIT_REACHED');
  const role = formatRoles(command.role);
  if (role === '') throw new DomainError('VALIDATION_ERROR', { details: '[body.role] A role is required' });
  const maximum = command.teams.maximumMembersPerTeam;
  if (team && maximum !== null && team.members.size >= maximum) throw new DomainError('TEAM_MEMBER_LIMIT_REACHED');
  const events: DomainEvent[] = [
    MemberAdded({ organizationId: state.id, memberId: command.memberId, userId: command.userId, role, teamId: team?.id ?? null, via: 'added' }),
  ];
  if (team) events.push(TeamMemberAdded({ organizationId: state.id, teamId: team.id, teamMemberId: command.teamMemberId, userId: command.userId }));
  return events;
}

function decideUpdateRole(command: UpdateMemberRole, state: OrganizationState): DomainEvent[] {
  const roles = parseRoleList(command.role);
  if (roles.length === 0) throw new DomainError('VALIDATION_ERROR', { details: '[body.role] A role is required' });
  const { org, actor } = requireActor(state, command.actorUserId);
  const target = org.members.get(command.memberId);
  if (!target) throw new DomainError('MEMBER_NOT_FOUND');
  // Only holders of the creator role may hand it out or take it away: anyone else could raise themself above it.
  const actorIsOwner = isOwner(actor);
  const settingOwner = roles.includes(creatorRole);
  if (!actorIsOwner && (isOwner(target) || settingOwner)) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
  if (actorIsOwner && target.id === actor.id && !settingOwner && ownerCount(org) <= 1) {
    throw new DomainError('YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER');
  }
  // The creator role may do anything here (better-auth's allowCreatorAllPermissions on this route).
  if (!actorIsOwner && !rolesGrant(actor.role, { member: ['update'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
  const unknown = roles.filter((role) => !isOrganizationRole(role));
  if (unknown.length > 0) throw new DomainError('ROLE_NOT_FOUND', { details: unknown.join(', ') });
  const role = formatRoles(roles);
  if (role === target.role) return [];
  return [MemberRoleChanged({ organizationId: org.id, memberId: target.id, userId: target.userId, role })];
}

function findTarget(org: ActiveOrganization, target: RemovalTarget): MemberState | null {
  if ('memberId' in target) return org.members.get(target.memberId) ?? null;
  return target.userId === null ? null : memberByUserId(org, target.userId);
}

function decideRemove(command: RemoveMember, state: OrganizationState): DomainEvent[] {
  const { org, actor } = requireActor(state, command.actorUserId);
  const target = findTarget(org, command.target);
  if (!target) throw new DomainError('MEMBER_NOT_FOUND');
  // better-auth answers both an owner removed by a non-owner and the last owner removed with this message.
  if (isOwner(target) && (!isOwner(actor) || ownerCount(org) <= 1)) {
    throw new DomainError('YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
  }
  // No exception for oneself: a member without member:delete leaves through /organization/leave.
  if (!rolesGrant(actor.role, { member: ['delete'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER');
  return [MemberRemoved({ organizationId: org.id, memberId: target.id, userId: target.userId, reason: 'removed' })];
}

function decideLeave(command: LeaveOrganization, state: OrganizationState): DomainEvent[] {
  const { org, actor } = requireActor(state, command.userId);
  if (isOwner(actor) && ownerCount(org) <= 1) throw new DomainError('YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
  return [MemberRemoved({ organizationId: org.id, memberId: actor.id, userId: actor.userId, reason: 'left' })];
}

function decideRemoveDeletedUser(command: RemoveDeletedUser, state: OrganizationState): DomainEvent[] {
  const member = state.status === 'active' ? memberByUserId(state, command.userId) : null;
  if (state.status !== 'active' || !member) return [];
  return [MemberRemoved({ organizationId: state.id, memberId: member.id, userId: member.userId, reason: 'user_deleted' })];
}

export function decideMember(command: MemberCommand, state: OrganizationState): DomainEvent[] {
  switch (command.type) {
    case 'add':
      return decideAdd(command, state);
    case 'update-role':
      return decideUpdateRole(command, state);
    case 'remove':
      return decideRemove(command, state);
    case 'leave':
      return decideLeave(command, state);
    case 'remove-deleted-user':
      return decideRemoveDeletedUser(command, state);
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
}
