import {
  DomainError,
  InvitationAccepted,
  InvitationCanceled,
  InvitationCreated,
  InvitationRejected,
  InvitationResent,
  MemberAdded,
  TeamMemberAdded,
  creatorRole,
  formatRoles,
  isOrganizationRole,
  isValidEmail,
  parseRoleList,
  rolesGrant,
  type DomainEvent,
} from '@portcullis/contracts';
import {
  isInvitationOpen,
  memberByUserId,
  pendingInvitationFor,
  type ActiveOrganization,
  type InvitationState,
  type OrganizationState,
} from './organization.state.ts';

/**
 * Invitations on the organization stream: invite (or resend), accept, reject, cancel. Each is decided on the
 * whole organization, so the membership limit and the one-pending-invitation-per-address rule hold however
 * many requests race: the loser's append conflicts and it decides again on the newer state.
 */

export interface TeamSettings {
  readonly enabled: boolean;
  readonly maximumMembersPerTeam: number | null;
}

/** Who is acting on an invitation addressed to them: the signed-in user. */
export interface Recipient {
  readonly id: string;
  readonly email: string;
  readonly emailVerified: boolean;
}

export interface InviteCommand {
  readonly type: 'invite';
  readonly inviterId: string;
  /** As sent: lower-cased and checked here. */
  readonly email: string;
  /** As sent: a role, a comma-separated list, or an array of either. */
  readonly role: string | readonly string[];
  readonly teamIds: readonly string[];
  /** The user holding `email` (lower-cased) now, if there is one: a member of the organization cannot be invited. */
  readonly invitedUserId: string | null;
  /** For a new invitation; unused when a pending one is resent. */
  readonly invitationId: string;
  readonly now: Date;
  readonly expiresInSeconds: number;
  readonly invitationLimit: number;
  readonly teams: TeamSettings;
  /** better-auth's `resend`: an invitation still open to the address is sent again, not refused. */
  readonly resend: boolean;
}

export interface AcceptCommand {
  readonly type: 'accept';
  readonly invitationId: string;
  readonly recipient: Recipient;
  readonly memberId: string;
  readonly teamMemberIdFor: (teamId: string) => string;
  readonly now: Date;
  readonly requireEmailVerification: boolean;
  readonly membershipLimit: number;
  readonly teams: TeamSettings;
}

export interface RejectCommand {
  readonly type: 'reject';
  readonly invitationId: string;
  readonly recipient: Recipient;
  readonly now: Date;
  readonly requireEmailVerification: boolean;
}

export interface CancelCommand {
  readonly type: 'cancel';
  readonly invitationId: string;
  readonly byUserId: string;
}

export type InvitationCommand = InviteCommand | AcceptCommand | RejectCommand | CancelCommand;

/** The team ids an invitation names: better-auth stores several as one comma-separated `teamId`. */
export function invitationTeamIds(invitation: Pick<InvitationState, 'teamId'>): string[] {
  return invitation.teamId === null ? [] : invitation.teamId.split(',').filter((id) => id !== '');
}

function checkTeams(org: ActiveOrganization, teamIds: readonly string[], teams: TeamSettings, userId: string | null): void {
  for (const teamId of teamIds) {
    const team = org.teams.get(teamId);
    if (!team) throw new DomainError('TEAM_NOT_FOUND');
    const alreadyIn = userId !== null && team.members.has(userId);
    if (!alreadyIn && teams.maximumMembersPerTeam !== null && team.members.size >= teams.maximumMembersPerTeam) {
      throw new DomainError('TEAM_MEMBER_LIMIT_REACHED');
    }
  }
}

function decideInvite(command: InviteCommand, state: OrganizationState): DomainEvent[] {
  const email = command.email.toLowerCase();
  if (!isValidEmail(email)) throw new DomainError('INVALID_EMAIL');
  // As better-auth: the inviter is looked up before the organization, so a gone organization has no inviter.
  if (state.status !== 'active') throw new DomainError('MEMBER_NOT_FOUND');
  const inviter = memberByUserId(state, command.inviterId);
  if (!inviter) throw new DomainError('MEMBER_NOT_FOUND');
  if (!rolesGrant(inviter.role, { invitation: ['create'] })) {
    throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION');
  }
  const roles = parseRoleList(command.role);
  if (roles.length === 0) throw new DomainError('ROLE_NOT_FOUND');
  const unknown = roles.filter((role) => !isOrganizationRole(role));
  if (unknown.length > 0) throw new DomainError('ROLE_NOT_FOUND', { details: unknown.join(', ') });
  // Only holders of the creator role may hand it out, or the role's powers could be escalated by invitation.
  const inviterIsCreator = parseRoleList(inviter.role).includes(creatorRole);
  if (!inviterIsCreator && roles.includes(creatorRole)) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE');
  if (command.invitedUserId !== null && memberByUserId(state, command.invitedUserId)) {
    throw new DomainError('USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION');
  }

  const expiresAt = new Date(command.now.getTime() + command.expiresInSeconds * 1000).toISOString();
  const pending = pendingInvitationFor(state, email);
  if (pending) {
    // better-auth refuses to invite an address twice unless asked to resend the open invitation.
    if (isInvitationOpen(pending, command.now) && !command.resend) throw new DomainError('USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION');
    // A second invitation to one address would leave two pending links; the pending one is sent again instead
    // (an expired one renewed), with its role and teams as they were, so the same creator-role rule applies.
    if (!inviterIsCreator && parseRoleList(pending.role).includes(creatorRole)) {
      throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE');
    }
    return [InvitationResent({ organizationId: state.id, invitationId: pending.id, inviterId: command.inviterId, expiresAt })];
  }

  let open = 0;
  for (const invitation of state.invitations.values()) if (isInvitationOpen(invitation, command.now)) open += 1;
  if (open >= command.invitationLimit) throw new DomainError('INVITATION_LIMIT_REACHED');

  const teamIds = command.teams.enabled ? command.teamIds : [];
  // Several teams are stored as one comma-separated value, so a comma inside an id would split it.
  if (teamIds.some((id) => id.includes(','))) throw new DomainError('INVALID_TEAM_ID');
  checkTeams(state, teamIds, command.teams, null);

  return [
    InvitationCreated({
      organizationId: state.id,
      invitationId: command.invitationId,
      email,
      role: formatRoles(roles),
      teamId: teamIds.length > 0 ? teamIds.join(',') : null,
      inviterId: command.inviterId,
      expiresAt,
    }),
  ];
}

/** The open invitation a recipient acts on: pending, unexpired, addressed to them. */
function openInvitationFor(
  state: OrganizationState,
  command: { invitationId: string; recipient: Recipient; now: Date; requireEmailVerification: boolean },
): { org: ActiveOrganization; invitation: InvitationState } {
  const invitation = state.status === 'active' ? state.invitations.get(command.invitationId) : undefined;
  if (state.status !== 'active' || !invitation || !isInvitationOpen(invitation, command.now)) {
    throw new DomainError('INVITATION_NOT_FOUND');
  }
  if (invitation.email.toLowerCase() !== command.recipient.email.toLowerCase()) {
    throw new DomainError('YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
  }
  if (command.requireEmailVerification && !command.recipient.emailVerified) {
    throw new DomainError('EMAIL_VERIFICATION_REQUIRED_BEFORE_ACCEPTING_OR_REJECTING_INVITATION');
  }
  return { org: state, invitation };
}

function decideAccept(command: AcceptCommand, state: OrganizationState): DomainEvent[] {
  const { org, invitation } = openInvitationFor(state, command);
  // Stricter than better-auth, which checks this only when the invitation is fetched: access handed out by
  // someone who has since been removed is not honoured.
  if (!memberByUserId(org, invitation.inviterId)) throw new DomainError('INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION');
  if (org.members.size >= command.membershipLimit) throw new DomainError('ORGANIZATION_MEMBERSHIP_LIMIT_REACHED');
  const userId = command.recipient.id;
  const teamIds = command.teams.enabled ? invitationTeamIds(invitation) : [];
  checkTeams(org, teamIds, command.teams, userId);

  const events: DomainEvent[] = [InvitationAccepted({ organizationId: org.id, invitationId: invitation.id, userId })];
  for (const teamId of teamIds) {
    if (org.teams.get(teamId)?.members.has(userId)) continue;
    events.push(TeamMemberAdded({ organizationId: org.id, teamId, teamMemberId: command.teamMemberIdFor(teamId), userId }));
  }
  // Someone who joined another way since being invited stays the member they are: a second member row for
  // one user would break every per-user rule (better-auth would create one).
  if (!memberByUserId(org, userId)) {
    events.push(
      MemberAdded({
        organizationId: org.id,
        memberId: command.memberId,
        userId,
        role: invitation.role,
        teamId: teamIds.length === 1 ? teamIds[0]! : null,
        via: 'invitation',
      }),
    );
  }
  return events;
}

function decideReject(command: RejectCommand, state: OrganizationState): DomainEvent[] {
  const { org, invitation } = openInvitationFor(state, command);
  return [InvitationRejected({ organizationId: org.id, invitationId: invitation.id, userId: command.recipient.id })];
}

function decideCancel(command: CancelCommand, state: OrganizationState): DomainEvent[] {
  const invitation = state.status === 'active' ? state.invitations.get(command.invitationId) : undefined;
  if (state.status !== 'active' || !invitation) throw new DomainError('INVITATION_NOT_FOUND');
  const member = memberByUserId(state, command.byUserId);
  if (!member) throw new DomainError('MEMBER_NOT_FOUND');
  if (!rolesGrant(member.role, { invitation: ['cancel'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION');
  // Asked after the permission, so only those who may cancel learn what became of an invitation.
  if (invitation.status !== 'pending') throw new DomainError('INVITATION_NOT_FOUND');
  return [InvitationCanceled({ organizationId: state.id, invitationId: invitation.id, byUserId: command.byUserId })];
}

export function decideInvitation(command: InvitationCommand, state: OrganizationState): DomainEvent[] {
  switch (command.type) {
    case 'invite':
      return decideInvite(command, state);
    case 'accept':
      return decideAccept(command, state);
    case 'reject':
      return decideReject(command, state);
    case 'cancel':
      return decideCancel(command, state);
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
}
