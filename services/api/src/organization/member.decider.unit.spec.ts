import { describe, expect, it } from 'vitest';
import {
  MemberAdded,
  MemberRemoved,
  MemberRoleChanged,
  OrganizationCreated,
  OrganizationDeleted,
  TeamCreated,
  TeamMemberAdded,
  type DomainEvent,
  type TimedEvent,
} from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideMember, type AddMember } from './member.decider.ts';
import { evolveOrganization, initialOrganizationState } from './organization.state.ts';

const given = deciderSpec({ evolve: evolveOrganization, initial: initialOrganizationState, decide: decideMember });

const at = (event: DomainEvent): TimedEvent => ({ event, occurredAt: '2026-05-01T10:00:00.000Z' });
const organizationId = 'org1';
const created = at(OrganizationCreated({ organizationId, name: 'Acme', slug: 'acme', logo: null, metadata: null, createdByUserId: 'u-owner' }));
const member = (userId: string, role: string) => at(MemberAdded({ organizationId, memberId: `m-${userId}`, userId, role, teamId: null, via: 'added' }));
const acme = [created, member('u-owner', 'owner'), member('u-admin', 'admin'), member('u-member', 'member')];
const team = at(TeamCreated({ organizationId, teamId: 't1', name: 'Core' }));

function add(overrides: Partial<AddMember> = {}): AddMember {
  return {
    type: 'add',
    memberId: 'm-new',
    userId: 'u-new',
    userExists: true,
    role: 'member',
    teamId: null,
    teamMemberId: 'tm-new',
    membershipLimit: 100,
    teams: { enabled: true, maximumMembersPerTeam: null },
    ...overrides,
  };
}

describe('member decider: add-member (server only)', () => {
  it('adds a member with the roles as sent, stored comma-separated without padding', () => {
    given(acme)
      .when(add({ role: ['admin', ' member'] }))
      .then([MemberAdded({ organizationId, memberId: 'm-new', userId: 'u-new', role: 'admin,member', teamId: null, via: 'added' })]);
  });

  it('puts the new member in a team when asked', () => {
    given([...acme, team])
      .when(add({ teamId: 't1' }))
      .then([
        MemberAdded({ organizationId, memberId: 'm-new', userId: 'u-new', role: 'member', teamId: 't1', via: 'added' }),
        TeamMemberAdded({ organizationId, teamId: 't1', teamMemberId: 'tm-new', userId: 'u-new' }),
      ]);
  });

  it('refuses a user who is already a member', () => {
    given(acme).when(add({ userId: 'u-member' })).thenFails('USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION');
  });

  it('refuses at the membership limit, counting every member', () => {
    given(acme).when(add({ membershipLimit: 3 })).thenFails('ORGANIZATION_MEMBERSHIP_LIMIT_REACHED');
    expect(decideMember(add({ membershipLimit: 4 }), acme.reduce(evolveOrganization, initialOrganizationState()))).toHaveLength(1);
  });

  it('refuses an unknown team, a team while teams are off, and a full team', () => {
    given(acme).when(add({ teamId: 't-none' })).thenFails('TEAM_NOT_FOUND');
    given([...acme, team]).when(add({ teamId: 't1', teams: { enabled: false, maximumMembersPerTeam: null } })).thenFails('TEAMS_NOT_ENABLED');
    given([...acme, team, at(TeamMemberAdded({ organizationId, teamId: 't1', teamMemberId: 'tm1', userId: 'u-admin' }))])
      .when(add({ teamId: 't1', teams: { enabled: true, maximumMembersPerTeam: 1 } }))
      .thenFails('TEAM_MEMBER_LIMIT_REACHED');
  });

  it('refuses a user without an account, with better-auth\'s 400, after the team switch', () => {
    let thrown: unknown;
    try {
      decideMember(add({ userExists: false }), acme.reduce(evolveOrganization, initialOrganizationState()));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'USER_NOT_FOUND', status: 400 });
    given(acme).when(add({ userExists: false, teamId: 't1', teams: { enabled: false, maximumMembersPerTeam: null } })).thenFails('TEAMS_NOT_ENABLED');
  });

  it('refuses an organization that does not exist', () => {
    given([]).when(add()).thenFails('ORGANIZATION_NOT_FOUND');
  });

  it('refuses an empty role', () => {
    given(acme).when(add({ role: ' , ' })).thenFails('VALIDATION_ERROR');
  });
});

describe('member decider: update-member-role', () => {
  const update = (actorUserId: string, memberId: string, role: string | string[]) => ({ type: 'update-role' as const, actorUserId, memberId, role });

  it('lets an owner or admin change a member’s role', () => {
    given(acme).when(update('u-admin', 'm-u-member', 'admin')).then([MemberRoleChanged({ organizationId, memberId: 'm-u-member', userId: 'u-member', role: 'admin' })]);
    given(acme)
      .when(update('u-owner', 'm-u-member', ['member', 'admin']))
      .then([MemberRoleChanged({ organizationId, memberId: 'm-u-member', userId: 'u-member', role: 'member,admin' })]);
  });

  it('refuses a member without member:update', () => {
    given(acme).when(update('u-member', 'm-u-admin', 'member')).thenFails('YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
  });

  it('lets only the creator role hand out the creator role', () => {
    given(acme).when(update('u-admin', 'm-u-member', 'owner')).thenFails('YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
    given(acme).when(update('u-admin', 'm-u-admin', 'admin,owner')).thenFails('YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
    given(acme).when(update('u-owner', 'm-u-member', 'owner')).then([MemberRoleChanged({ organizationId, memberId: 'm-u-member', userId: 'u-member', role: 'owner' })]);
  });

  it('lets only the creator role take the creator role away', () => {
    given(acme).when(update('u-admin', 'm-u-owner', 'member')).thenFails('YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
    given([...acme, member('u-owner2', 'owner')])
      .when(update('u-owner', 'm-u-owner2', 'admin'))
      .then([MemberRoleChanged({ organizationId, memberId: 'm-u-owner2', userId: 'u-owner2', role: 'admin' })]);
  });

  it('refuses the last owner demoting themself, but not with another owner left', () => {
    given(acme).when(update('u-owner', 'm-u-owner', 'admin')).thenFails('YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER');
    given(acme).when(update('u-owner', 'm-u-owner', 'owner,admin')).then([MemberRoleChanged({ organizationId, memberId: 'm-u-owner', userId: 'u-owner', role: 'owner,admin' })]);
    given([...acme, member('u-owner2', 'owner')])
      .when(update('u-owner', 'm-u-owner', 'admin'))
      .then([MemberRoleChanged({ organizationId, memberId: 'm-u-owner', userId: 'u-owner', role: 'admin' })]);
  });

  it('counts an owner among several roles as an owner', () => {
    given([created, member('u-a', 'admin,owner'), member('u-b', 'member')])
      .when(update('u-a', 'm-u-a', 'admin'))
      .thenFails('YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER');
  });

  it('refuses roles it does not know, naming them', () => {
    let thrown: unknown;
    try {
      decideMember(update('u-owner', 'm-u-member', 'admin,boss,chief'), acme.reduce(evolveOrganization, initialOrganizationState()));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'ROLE_NOT_FOUND', details: 'boss, chief' });
  });

  it('refuses an empty role, an unknown member and a caller who is no member', () => {
    given(acme).when(update('u-owner', 'm-u-member', [])).thenFails('VALIDATION_ERROR');
    given(acme).when(update('u-owner', 'm-nobody', 'admin')).thenFails('MEMBER_NOT_FOUND');
    given(acme).when(update('u-stranger', 'm-u-member', 'admin')).thenFails('MEMBER_NOT_FOUND');
  });

  it('decides nothing when the role stays the same', () => {
    given(acme).when(update('u-owner', 'm-u-admin', ' admin ')).then([]);
  });
});

describe('member decider: remove-member', () => {
  const byId = (actorUserId: string, memberId: string) => ({ type: 'remove' as const, actorUserId, target: { memberId } });
  const byUser = (actorUserId: string, userId: string | null) => ({ type: 'remove' as const, actorUserId, target: { userId } });

  it('lets an owner or admin remove a member, by id or by the user an email names', () => {
    given(acme).when(byId('u-admin', 'm-u-member')).then([MemberRemoved({ organizationId, memberId: 'm-u-member', userId: 'u-member', reason: 'removed' })]);
    given(acme).when(byUser('u-owner', 'u-admin')).then([MemberRemoved({ organizationId, memberId: 'm-u-admin', userId: 'u-admin', reason: 'removed' })]);
  });

  it('refuses a member without member:delete, even removing themself (they leave instead)', () => {
    given(acme).when(byId('u-member', 'm-u-admin')).thenFails('YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER');
    given(acme).when(byId('u-member', 'm-u-member')).thenFails('YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER');
  });

  it('refuses removing the last owner, and an owner removed by a non-owner', () => {
    given(acme).when(byUser('u-admin', 'u-owner')).thenFails('YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
    given(acme).when(byId('u-owner', 'm-u-owner')).thenFails('YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
    given([...acme, member('u-owner2', 'owner')]).when(byId('u-admin', 'm-u-owner2')).thenFails('YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
  });

  it('lets an owner remove another owner', () => {
    given([...acme, member('u-owner2', 'owner')])
      .when(byId('u-owner', 'm-u-owner2'))
      .then([MemberRemoved({ organizationId, memberId: 'm-u-owner2', userId: 'u-owner2', reason: 'removed' })]);
  });

  it('refuses an unknown member, an email nobody has, and a caller who is no member', () => {
    given(acme).when(byId('u-owner', 'm-nobody')).thenFails('MEMBER_NOT_FOUND');
    given(acme).when(byUser('u-owner', null)).thenFails('MEMBER_NOT_FOUND');
    given(acme).when(byUser('u-owner', 'u-stranger')).thenFails('MEMBER_NOT_FOUND');
    given(acme).when(byId('u-stranger', 'm-u-member')).thenFails('MEMBER_NOT_FOUND');
    given([]).when(byId('u-owner', 'm-u-member')).thenFails('MEMBER_NOT_FOUND');
  });
});

describe('member decider: leave', () => {
  it('lets a member leave', () => {
    given(acme).when({ type: 'leave', userId: 'u-admin' }).then([MemberRemoved({ organizationId, memberId: 'm-u-admin', userId: 'u-admin', reason: 'left' })]);
  });

  it('refuses the only owner, but lets an owner go when another remains', () => {
    given(acme).when({ type: 'leave', userId: 'u-owner' }).thenFails('YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
    given([...acme, member('u-owner2', 'member,owner')])
      .when({ type: 'leave', userId: 'u-owner' })
      .then([MemberRemoved({ organizationId, memberId: 'm-u-owner', userId: 'u-owner', reason: 'left' })]);
  });

  it('refuses someone who is no member', () => {
    given(acme).when({ type: 'leave', userId: 'u-stranger' }).thenFails('MEMBER_NOT_FOUND');
    given([]).when({ type: 'leave', userId: 'u-owner' }).thenFails('MEMBER_NOT_FOUND');
  });

  it('a member who left is no longer one', () => {
    given([...acme, at(MemberRemoved({ organizationId, memberId: 'm-u-admin', userId: 'u-admin', reason: 'left' }))])
      .when({ type: 'leave', userId: 'u-admin' })
      .thenFails('MEMBER_NOT_FOUND');
  });
});

describe('member decider: user deleted', () => {
  it('removes the deleted user’s membership, even the last owner’s', () => {
    given(acme)
      .when({ type: 'remove-deleted-user', userId: 'u-owner' })
      .then([MemberRemoved({ organizationId, memberId: 'm-u-owner', userId: 'u-owner', reason: 'user_deleted' })]);
  });

  it('decides nothing where the user is no member, or the organization is gone', () => {
    given(acme).when({ type: 'remove-deleted-user', userId: 'u-stranger' }).then([]);
    given([...acme, at(OrganizationDeleted({ organizationId, slug: 'acme', memberUserIds: [] }))]).when({ type: 'remove-deleted-user', userId: 'u-owner' }).then([]);
  });
});
