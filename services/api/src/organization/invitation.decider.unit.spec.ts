import { describe, expect, it } from 'vitest';
import {
  DomainError,
  InvitationAccepted,
  InvitationCanceled,
  InvitationCreated,
  InvitationRejected,
  InvitationResent,
  MemberAdded,
  MemberRemoved,
  OrganizationDeleted,
  TeamMemberAdded,
  TeamRemoved,
  organizationRoleGrants,
  organizationRoles,
  type DomainEvent,
  type TimedEvent,
} from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import {
  decideInvitation,
  invitationTeamIds,
  type AcceptCommand,
  type CancelCommand,
  type InviteCommand,
  type RejectCommand,
  type TeamSettings,
} from './invitation.decider.ts';
import { acmeWithTeams, at, ORG } from './organization-fixture.ts';
import { evolveOrganization, initialOrganizationState } from './organization.state.ts';

const NOW = new Date('2025-01-01T01:00:00.000Z');
const DAY = 86_400;
const inDays = (days: number, from = NOW): string => new Date(from.getTime() + days * DAY * 1000).toISOString();

const invitations = deciderSpec({ evolve: evolveOrganization, initial: initialOrganizationState, decide: decideInvitation });

const organization = acmeWithTeams;
const withEvents = (...events: DomainEvent[]): TimedEvent[] => [...organization, ...events.map(at)];

const teamsOn: TeamSettings = { enabled: true, maximumMembersPerTeam: null };

const invite = (inviterId: string, extra: Partial<InviteCommand> = {}): InviteCommand => ({
  type: 'invite',
  resend: false,
  inviterId,
  email: 'Guest@Example.com',
  role: 'member',
  teamIds: [],
  invitedUserId: null,
  invitationId: 'inv-new',
  now: NOW,
  expiresInSeconds: 2 * DAY,
  invitationLimit: 100,
  teams: teamsOn,
  ...extra,
});

const created = (extra: Partial<Parameters<typeof InvitationCreated>[0]> = {}) =>
  InvitationCreated({
    organizationId: ORG,
    invitationId: 'inv-1',
    email: 'guest@example.com',
    role: 'member',
    teamId: null,
    inviterId: 'u-owner',
    expiresAt: inDays(2),
    ...extra,
  });

const guest = { id: 'u-guest', email: 'GUEST@example.COM', emailVerified: false };

const accept = (extra: Partial<AcceptCommand> = {}): AcceptCommand => ({
  type: 'accept',
  invitationId: 'inv-1',
  recipient: guest,
  memberId: 'm-guest',
  teamMemberIdFor: (teamId) => `tm-${teamId}`,
  now: NOW,
  requireEmailVerification: false,
  membershipLimit: 100,
  teams: teamsOn,
  ...extra,
});
const reject = (extra: Partial<RejectCommand> = {}): RejectCommand => ({
  type: 'reject',
  invitationId: 'inv-1',
  recipient: guest,
  now: NOW,
  requireEmailVerification: false,
  ...extra,
});
const cancel = (byUserId: string, invitationId = 'inv-1'): CancelCommand => ({ type: 'cancel', invitationId, byUserId });

const guestJoined = (teamId: string | null = null) =>
  MemberAdded({ organizationId: ORG, memberId: 'm-guest', userId: 'u-guest', role: 'member', teamId, via: 'invitation' });

describe('invitation decider: invite', () => {
  it('invites a lower-cased address with the roles as stored, expiring after the configured time', () => {
    invitations(organization)
      .when(invite('u-owner', { role: ['admin', ' member'] }))
      .then([created({ invitationId: 'inv-new', role: 'admin,member' })]);
    invitations(organization)
      .when(invite('u-admin', { role: 'admin, member', expiresInSeconds: 60 }))
      .then([created({ invitationId: 'inv-new', role: 'admin,member', inviterId: 'u-admin', expiresAt: new Date(NOW.getTime() + 60_000).toISOString() })]);
  });

  it('grants invitation:create exactly as the permission table says, any one of several roles being enough', () => {
    for (const role of [...organizationRoles, 'member,admin', 'auditor']) {
      const userId = { owner: 'u-owner', admin: 'u-admin', member: 'u-member', 'member,admin': 'u-both', auditor: 'u-stranger-role' }[role]!;
      const allowed = role.split(',').some((r) => (organizationRoleGrants as Record<string, { invitation: readonly string[] }>)[r]?.invitation.includes('create'));
      const spec = invitations(organization).when(invite(userId));
      if (allowed) spec.then([created({ invitationId: 'inv-new', inviterId: userId })]);
      else spec.thenFails('YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION');
    }
  });

  it('refuses a bad address, a non-member, a gone organization and unknown or missing roles', () => {
    invitations(organization).when(invite('u-owner', { email: 'not-an-address' })).thenFails('INVALID_EMAIL');
    invitations(organization).when(invite('u-nobody')).thenFails('MEMBER_NOT_FOUND');
    invitations([]).when(invite('u-owner')).thenFails('MEMBER_NOT_FOUND');
    invitations(withEvents(OrganizationDeleted({ organizationId: ORG, slug: 'acme', memberUserIds: [] }))).when(invite('u-owner')).thenFails('MEMBER_NOT_FOUND');
    invitations(organization).when(invite('u-owner', { role: 'superuser' })).thenFails('ROLE_NOT_FOUND');
    invitations(organization).when(invite('u-owner', { role: ['member', 'auditor'] })).thenFails('ROLE_NOT_FOUND');
    invitations(organization).when(invite('u-owner', { role: ' , ' })).thenFails('ROLE_NOT_FOUND');
    invitations(organization).when(invite('u-owner', { role: [] })).thenFails('ROLE_NOT_FOUND');
  });

  it('names the unknown roles in the refusal', () => {
    const run = () => decideInvitation(invite('u-owner', { role: 'member,superuser,root' }), organization.reduce(evolveOrganization, initialOrganizationState()));
    expect(run).toThrow(DomainError);
    try {
      run();
    } catch (error) {
      expect((error as DomainError).details).toBe('superuser, root');
    }
  });

  it('lets only holders of the creator role invite with it', () => {
    invitations(organization).when(invite('u-admin', { role: 'owner' })).thenFails('YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE');
    invitations(organization).when(invite('u-both', { role: ['admin', 'owner'] })).thenFails('YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE');
    invitations(organization).when(invite('u-owner', { role: 'owner' })).then([created({ invitationId: 'inv-new', role: 'owner' })]);
  });

  it('refuses to invite someone who is a member already', () => {
    invitations(organization).when(invite('u-owner', { invitedUserId: 'u-member' })).thenFails('USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION');
    invitations(organization).when(invite('u-owner', { invitedUserId: 'u-guest' })).then([created({ invitationId: 'inv-new' })]);
  });

  it('refuses to invite an address with an open invitation again, unless asked to resend it', () => {
    const later = new Date(NOW.getTime() + DAY * 1000);
    invitations(withEvents(created()))
      .when(invite('u-admin', { now: later, email: 'GUEST@example.com', role: 'admin' }))
      .thenFails('USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION');
  });

  it('resends a pending invitation with a new expiry instead of inviting twice, an expired one even unasked', () => {
    const later = new Date(NOW.getTime() + DAY * 1000);
    invitations(withEvents(created()))
      .when(invite('u-admin', { now: later, email: 'GUEST@example.com', role: 'admin', resend: true }))
      .then([InvitationResent({ organizationId: ORG, invitationId: 'inv-1', inviterId: 'u-admin', expiresAt: inDays(2, later) })]);
    const muchLater = new Date(NOW.getTime() + 10 * DAY * 1000);
    invitations(withEvents(created()))
      .when(invite('u-owner', { now: muchLater }))
      .then([InvitationResent({ organizationId: ORG, invitationId: 'inv-1', inviterId: 'u-owner', expiresAt: inDays(2, muchLater) })]);
  });

  it('invites again once the earlier invitation is no longer pending', () => {
    for (const ended of [
      InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-x' }),
      InvitationRejected({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-x' }),
      InvitationCanceled({ organizationId: ORG, invitationId: 'inv-1', byUserId: 'u-owner' }),
    ]) {
      invitations(withEvents(created(), ended)).when(invite('u-owner')).then([created({ invitationId: 'inv-new' })]);
    }
  });

  it('does not let a non-creator resend an invitation carrying the creator role', () => {
    invitations(withEvents(created({ role: 'owner' }))).when(invite('u-admin', { role: 'member', resend: true })).thenFails('YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE');
  });

  it('counts only open invitations against the invitation limit', () => {
    const two = [created({ invitationId: 'a', email: 'a@example.com' }), created({ invitationId: 'b', email: 'b@example.com' })];
    invitations(withEvents(...two)).when(invite('u-owner', { invitationLimit: 2 })).thenFails('INVITATION_LIMIT_REACHED');
    invitations(withEvents(...two)).when(invite('u-owner', { invitationLimit: 3 })).then([created({ invitationId: 'inv-new' })]);
    const expiredAndCanceled = [
      created({ invitationId: 'a', email: 'a@example.com', expiresAt: new Date(NOW.getTime() - 1).toISOString() }),
      created({ invitationId: 'b', email: 'b@example.com' }),
      InvitationCanceled({ organizationId: ORG, invitationId: 'b', byUserId: 'u-owner' }),
    ];
    invitations(withEvents(...expiredAndCanceled)).when(invite('u-owner', { invitationLimit: 1 })).then([created({ invitationId: 'inv-new' })]);
  });

  it('names teams of the organization only, stored comma-separated, and only when teams are on', () => {
    invitations(organization).when(invite('u-owner', { teamIds: ['t-1'] })).then([created({ invitationId: 'inv-new', teamId: 't-1' })]);
    invitations(organization).when(invite('u-owner', { teamIds: ['t-1', 't-2'] })).then([created({ invitationId: 'inv-new', teamId: 't-1,t-2' })]);
    invitations(organization).when(invite('u-owner', { teamIds: ['t-1', 't-9'] })).thenFails('TEAM_NOT_FOUND');
    invitations(organization).when(invite('u-owner', { teamIds: ['t-1,t-2'] })).thenFails('INVALID_TEAM_ID');
    invitations(organization)
      .when(invite('u-owner', { teamIds: ['t-9'], teams: { enabled: false, maximumMembersPerTeam: null } }))
      .then([created({ invitationId: 'inv-new' })]);
  });

  it('refuses a team that is full', () => {
    const full = withEvents(TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-x', userId: 'u-member' }));
    invitations(full).when(invite('u-owner', { teamIds: ['t-1'], teams: { enabled: true, maximumMembersPerTeam: 1 } })).thenFails('TEAM_MEMBER_LIMIT_REACHED');
    invitations(full).when(invite('u-owner', { teamIds: ['t-1'], teams: { enabled: true, maximumMembersPerTeam: 2 } })).then([created({ invitationId: 'inv-new', teamId: 't-1' })]);
  });
});

describe('invitation decider: accept', () => {
  it('accepts for the addressee, in any letter case, adding the member with the invited role', () => {
    invitations(withEvents(created({ role: 'admin,member' })))
      .when(accept())
      .then([
        InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }),
        MemberAdded({ organizationId: ORG, memberId: 'm-guest', userId: 'u-guest', role: 'admin,member', teamId: null, via: 'invitation' }),
      ]);
  });

  it('adds the member to every team the invitation names', () => {
    invitations(withEvents(created({ teamId: 't-1' })))
      .when(accept())
      .then([
        InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }),
        TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-t-1', userId: 'u-guest' }),
        guestJoined('t-1'),
      ]);
    invitations(withEvents(created({ teamId: 't-1,t-2' })))
      .when(accept())
      .then([
        InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }),
        TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-t-1', userId: 'u-guest' }),
        TeamMemberAdded({ organizationId: ORG, teamId: 't-2', teamMemberId: 'tm-t-2', userId: 'u-guest' }),
        guestJoined(),
      ]);
    invitations(withEvents(created({ teamId: 't-1' })))
      .when(accept({ teams: { enabled: false, maximumMembersPerTeam: null } }))
      .then([InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }), guestJoined()]);
  });

  it('refuses a team removed since the invitation, or full', () => {
    invitations(withEvents(created({ teamId: 't-9' }))).when(accept()).thenFails('TEAM_NOT_FOUND');
    const full = withEvents(created({ teamId: 't-1' }), TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-x', userId: 'u-member' }));
    invitations(full).when(accept({ teams: { enabled: true, maximumMembersPerTeam: 1 } })).thenFails('TEAM_MEMBER_LIMIT_REACHED');
  });

  it('honours no invitation whose inviter has left or been removed since', () => {
    const removed = (reason: 'removed' | 'left') => MemberRemoved({ organizationId: ORG, memberId: 'm-u-admin', userId: 'u-admin', reason });
    for (const reason of ['removed', 'left'] as const) {
      invitations(withEvents(created({ inviterId: 'u-admin' }), removed(reason)))
        .when(accept())
        .thenFails('INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION');
    }
  });

  it("drops a deleted inviter's pending invitations, and a removed team from pending invitations", () => {
    const inviterDeleted = MemberRemoved({ organizationId: ORG, memberId: 'm-u-admin', userId: 'u-admin', reason: 'user_deleted' });
    invitations(withEvents(created({ inviterId: 'u-admin' }), inviterDeleted)).when(accept()).thenFails('INVITATION_NOT_FOUND');
    invitations(withEvents(created({ teamId: 't-1,t-2' }), TeamRemoved({ organizationId: ORG, teamId: 't-1' })))
      .when(accept())
      .then([
        InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }),
        TeamMemberAdded({ organizationId: ORG, teamId: 't-2', teamMemberId: 'tm-t-2', userId: 'u-guest' }),
        guestJoined('t-2'),
      ]);
  });

  it('accepts only a pending, unexpired invitation of this organization', () => {
    invitations(organization).when(accept()).thenFails('INVITATION_NOT_FOUND');
    invitations(withEvents(created({ expiresAt: new Date(NOW.getTime() - 1).toISOString() }))).when(accept()).thenFails('INVITATION_NOT_FOUND');
    invitations(withEvents(created({ expiresAt: NOW.toISOString() }))).when(accept()).then([
      InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }),
      guestJoined(),
    ]);
    for (const ended of [
      InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }),
      InvitationRejected({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }),
      InvitationCanceled({ organizationId: ORG, invitationId: 'inv-1', byUserId: 'u-owner' }),
    ]) {
      invitations(withEvents(created(), ended)).when(accept()).thenFails('INVITATION_NOT_FOUND');
    }
    invitations(withEvents(created(), OrganizationDeleted({ organizationId: ORG, slug: 'acme', memberUserIds: [] }))).when(accept()).thenFails('INVITATION_NOT_FOUND');
  });

  it('a resent invitation is open until its new expiry', () => {
    const resent = InvitationResent({ organizationId: ORG, invitationId: 'inv-1', inviterId: 'u-owner', expiresAt: inDays(5) });
    const afterFirstExpiry = new Date(NOW.getTime() + 3 * DAY * 1000);
    invitations(withEvents(created())).when(accept({ now: afterFirstExpiry })).thenFails('INVITATION_NOT_FOUND');
    invitations(withEvents(created(), resent)).when(accept({ now: afterFirstExpiry })).then([
      InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }),
      guestJoined(),
    ]);
  });

  it('refuses anyone but the addressee, and an unverified addressee when verification is required', () => {
    invitations(withEvents(created())).when(accept({ recipient: { ...guest, email: 'other@example.com' } })).thenFails('YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
    invitations(withEvents(created())).when(accept({ requireEmailVerification: true })).thenFails('EMAIL_VERIFICATION_REQUIRED_BEFORE_ACCEPTING_OR_REJECTING_INVITATION');
    invitations(withEvents(created()))
      .when(accept({ requireEmailVerification: true, recipient: { ...guest, emailVerified: true } }))
      .then([InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }), guestJoined()]);
  });

  it('refuses once the organization is at its membership limit', () => {
    invitations(withEvents(created())).when(accept({ membershipLimit: 5 })).thenFails('ORGANIZATION_MEMBERSHIP_LIMIT_REACHED');
    invitations(withEvents(created(), MemberRemoved({ organizationId: ORG, memberId: 'm-u-member', userId: 'u-member', reason: 'left' })))
      .when(accept({ membershipLimit: 5 }))
      .then([InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }), guestJoined()]);
  });

  it('keeps someone who joined another way since being invited as the one member they are', () => {
    invitations(withEvents(created({ teamId: 't-1' }), guestJoined()))
      .when(accept())
      .then([
        InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }),
        TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-t-1', userId: 'u-guest' }),
      ]);
  });
});

describe('invitation decider: reject and cancel', () => {
  it('rejects for the addressee only, while pending and unexpired', () => {
    invitations(withEvents(created())).when(reject()).then([InvitationRejected({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' })]);
    invitations(withEvents(created())).when(reject({ recipient: { ...guest, email: 'other@example.com' } })).thenFails('YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
    invitations(withEvents(created())).when(reject({ now: new Date(NOW.getTime() + 3 * DAY * 1000) })).thenFails('INVITATION_NOT_FOUND');
    invitations(withEvents(created(), InvitationRejected({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }))).when(reject()).thenFails('INVITATION_NOT_FOUND');
    invitations(withEvents(created())).when(reject({ requireEmailVerification: true })).thenFails('EMAIL_VERIFICATION_REQUIRED_BEFORE_ACCEPTING_OR_REJECTING_INVITATION');
  });

  it('grants invitation:cancel exactly as the permission table says', () => {
    for (const [userId, role] of [['u-owner', 'owner'], ['u-admin', 'admin'], ['u-member', 'member'], ['u-both', 'member,admin'], ['u-stranger-role', 'auditor']] as const) {
      const allowed = role.split(',').some((r) => (organizationRoleGrants as Record<string, { invitation: readonly string[] }>)[r]?.invitation.includes('cancel'));
      const spec = invitations(withEvents(created())).when(cancel(userId));
      if (allowed) spec.then([InvitationCanceled({ organizationId: ORG, invitationId: 'inv-1', byUserId: userId })]);
      else spec.thenFails('YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION');
    }
  });

  it('cancels only a pending invitation, expired or not, for a member', () => {
    invitations(withEvents(created())).when(cancel('u-nobody')).thenFails('MEMBER_NOT_FOUND');
    invitations(organization).when(cancel('u-owner')).thenFails('INVITATION_NOT_FOUND');
    invitations(withEvents(created(), InvitationCanceled({ organizationId: ORG, invitationId: 'inv-1', byUserId: 'u-owner' }))).when(cancel('u-owner')).thenFails('INVITATION_NOT_FOUND');
    invitations(withEvents(created(), InvitationAccepted({ organizationId: ORG, invitationId: 'inv-1', userId: 'u-guest' }))).when(cancel('u-owner')).thenFails('INVITATION_NOT_FOUND');
    invitations(withEvents(created({ expiresAt: new Date(NOW.getTime() - 1).toISOString() })))
      .when(cancel('u-admin'))
      .then([InvitationCanceled({ organizationId: ORG, invitationId: 'inv-1', byUserId: 'u-admin' })]);
  });

  it('reads the team ids an invitation names', () => {
    expect(invitationTeamIds({ teamId: null })).toEqual([]);
    expect(invitationTeamIds({ teamId: 't-1' })).toEqual(['t-1']);
    expect(invitationTeamIds({ teamId: 't-1,t-2' })).toEqual(['t-1', 't-2']);
  });
});
