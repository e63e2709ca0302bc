import { describe, expect, it } from 'vitest';
import {
  DomainError,
  InvitationCreated,
  MemberAdded,
  OrganizationCreated,
  TeamCreated,
  authorizeRole,
  organizationRoles,
  organizationStatements,
  rolesGrant,
  type DomainEvent,
  type ErrorCode,
  type OrganizationRole,
  type TimedEvent,
} from '@portcullis/contracts';
import { decideInvitation } from './invitation.decider.ts';
import { decideMember } from './member.decider.ts';
import { decideOrganization } from './organization.decider.ts';
import { evolveOrganization, initialOrganizationState, type OrganizationState } from './organization.state.ts';
import { decideTeam } from './team.decider.ts';

/**
 * Spec section 6, walked role by role: for every permission of the table, the decider of the command that
 * needs it runs for a member holding the role, and either decides or refuses with the spec's error.
 */

const NOW = new Date('2026-05-01T10:00:00.000Z');
const at = (event: DomainEvent): TimedEvent => ({ event, occurredAt: NOW.toISOString() });
const organizationId = 'org1';
const ACTOR = 'u-actor';

/** An organization where the actor holds `role`, with an owner, a plain member, two teams and a pending invitation. */
function organizationWithActor(role: string): OrganizationState {
  const member = (userId: string, memberRole: string) =>
    at(MemberAdded({ organizationId, memberId: `m-${userId}`, userId, role: memberRole, teamId: null, via: 'added' }));
  const events = [
    at(OrganizationCreated({ organizationId, name: 'Acme', slug: 'acme', logo: null, metadata: null, createdByUserId: 'u-founder' })),
    member('u-founder', 'owner'),
    member('u-target', 'member'),
    // The owner row runs with a second owner present, so no last-owner rule hides the permission's answer.
    member(ACTOR, role),
    at(TeamCreated({ organizationId, teamId: 't1', name: 'One' })),
    at(TeamCreated({ organizationId, teamId: 't2', name: 'Two' })),
    at(
      InvitationCreated({
        organizationId,
        invitationId: 'i1',
        email: 'invitee@example.com',
        role: 'member',
        teamId: null,
        inviterId: 'u-founder',
        expiresAt: new Date(NOW.getTime() + 3_600_000).toISOString(),
      }),
    ),
  ];
  return events.reduce(evolveOrganization, initialOrganizationState());
}

type Decide = (state: OrganizationState) => readonly DomainEvent[];

interface PermissionRow {
  readonly resource: 'organization' | 'member' | 'invitation' | 'team';
  readonly action: string;
  /** Spec section 6: yes for these roles. */
  readonly granted: readonly OrganizationRole[];
  /** The command that needs the permission, or null where no command of the api needs it. */
  readonly command: Decide | null;
  readonly refusal: ErrorCode | null;
}

const table: readonly PermissionRow[] = [
  {
    resource: 'organization',
    action: 'update',
    granted: ['owner', 'admin'],
    command: (s) => decideOrganization({ type: 'update', actorUserId: ACTOR, changes: { name: 'Renamed' } }, s),
    refusal: 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION',
  },
  {
    resource: 'organization',
    action: 'delete',
    granted: ['owner'],
    command: (s) => decideOrganization({ type: 'delete', actorUserId: ACTOR }, s),
    refusal: 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION',
  },
  // better-auth's add-member is a server call with no permission check: member:create guards no command.
  { resource: 'member', action: 'create', granted: ['owner', 'admin'], command: null, refusal: null },
  {
    resource: 'member',
    action: 'update',
    granted: ['owner', 'admin'],
    command: (s) => decideMember({ type: 'update-role', actorUserId: ACTOR, memberId: 'm-u-target', role: 'admin' }, s),
    refusal: 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER',
  },
  {
    resource: 'member',
    action: 'delete',
    granted: ['owner', 'admin'],
    command: (s) => decideMember({ type: 'remove', actorUserId: ACTOR, target: { memberId: 'm-u-target' } }, s),
    refusal: 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER',
  },
  {
    resource: 'invitation',
    action: 'create',
    granted: ['owner', 'admin'],
    command: (s) =>
      decideInvitation(
        {
          type: 'invite',
          resend: false,
          inviterId: ACTOR,
          email: 'new@example.com',
          role: 'member',
          teamIds: [],
          invitedUserId: null,
          invitationId: 'i2',
          now: NOW,
          expiresInSeconds: 3600,
          invitationLimit: 100,
          teams: { enabled: true, maximumMembersPerTeam: null },
        },
        s,
      ),
    refusal: 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION',
  },
  {
    resource: 'invitation',
    action: 'cancel',
    granted: ['owner', 'admin'],
    command: (s) => decideInvitation({ type: 'cancel', invitationId: 'i1', byUserId: ACTOR }, s),
    refusal: 'YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION',
  },
  {
    resource: 'team',
    action: 'create',
    granted: ['owner', 'admin'],
    command: (s) => decideTeam({ type: 'create-team', actorUserId: ACTOR, teamId: 't3', name: 'Three', maximumTeams: null }, s),
    refusal: 'YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION',
  },
  {
    resource: 'team',
    action: 'update',
    granted: ['owner', 'admin'],
    command: (s) => decideTeam({ type: 'update-team', actorUserId: ACTOR, teamId: 't1', name: 'Uno' }, s),
    refusal: 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM',
  },
  {
    resource: 'team',
    action: 'delete',
    granted: ['owner', 'admin'],
    command: (s) =>
      decideTeam({ type: 'remove-team', actorUserId: ACTOR, actorActiveTeamId: null, teamId: 't2', allowRemovingAllTeams: false }, s),
    refusal: 'YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION',
  },
];

function outcome(decide: Decide, state: OrganizationState): { decided: number } | { refused: string } {
  try {
    return { decided: decide(state).length };
  } catch (error) {
    if (error instanceof DomainError) return { refused: error.code };
    throw error;
  }
}

describe('permission table (spec section 6), role by role', () => {
  it('covers every action of every resource the spec lists', () => {
    const listed = table.map((row) => `${row.resource}:${row.action}`).sort();
    const statements = (['organization', 'member', 'invitation', 'team'] as const).flatMap((resource) =>
      organizationStatements[resource].map((action) => `${resource}:${action}`),
    );
    expect(listed).toEqual(statements.sort());
  });

  for (const row of table) {
    for (const role of organizationRoles) {
      const allowed = row.granted.includes(role);
      it(`${row.resource} ${row.action} for ${role}: ${allowed ? 'yes' : 'no'}`, () => {
        expect(rolesGrant(role, { [row.resource]: [row.action] })).toBe(allowed);
        expect(authorizeRole(role, { [row.resource]: [row.action] }).success).toBe(allowed);
        if (!row.command) return;
        const result = outcome(row.command, organizationWithActor(role));
        if (allowed) {
          expect(result).toMatchObject({ decided: expect.any(Number) });
          expect((result as { decided: number }).decided).toBeGreaterThan(0);
        } else {
          expect(result).toEqual({ refused: row.refusal });
        }
      });
    }
  }

  it('grants a member holding several roles what any one of them grants', () => {
    for (const row of table.filter((r) => r.command)) {
      const result = outcome(row.command!, organizationWithActor('member,admin'));
      const expected = row.granted.includes('admin') ? { decided: expect.any(Number) } : { refused: row.refusal };
      expect(result, `${row.resource}:${row.action}`).toMatchObject(expected);
    }
  });

  it('grants a role it does not know nothing', () => {
    for (const row of table.filter((r) => r.command)) {
      expect(outcome(row.command!, organizationWithActor('auditor')), `${row.resource}:${row.action}`).toEqual({ refused: row.refusal });
    }
  });
});

describe('authorizeRole: AND and OR over resources and actions', () => {
  it('needs every action of a resource by default', () => {
    expect(authorizeRole('admin', { member: ['create', 'update', 'delete'] })).toEqual({ success: true });
    expect(authorizeRole('admin', { organization: ['update', 'delete'] })).toEqual({
      success: false,
      error: 'unauthorized to access resource "organization"',
    });
  });

  it('takes one action of a resource when the resource says OR', () => {
    expect(authorizeRole('admin', { organization: { actions: ['update', 'delete'], connector: 'OR' } })).toEqual({ success: true });
    expect(authorizeRole('member', { organization: { actions: ['update', 'delete'], connector: 'OR' } })).toEqual({
      success: false,
      error: 'unauthorized to access resource "organization"',
    });
  });

  it('needs every resource with AND; an unknown resource refuses at once', () => {
    expect(authorizeRole('owner', { organization: ['delete'], team: ['create'] })).toEqual({ success: true });
    expect(authorizeRole('admin', { team: ['create'], organization: ['delete'] })).toEqual({
      success: false,
      error: 'unauthorized to access resource "organization"',
    });
    expect(authorizeRole('owner', { billing: ['read'], team: ['create'] })).toEqual({
      success: false,
      error: 'You are not allowed to access resource: billing',
    });
  });

  it('needs one granted resource with OR, skipping unknown ones', () => {
    expect(authorizeRole('admin', { organization: ['delete'], team: ['create'] }, 'OR')).toEqual({ success: true });
    expect(authorizeRole('admin', { billing: ['read'], team: ['create'] }, 'OR')).toEqual({ success: true });
    expect(authorizeRole('member', { organization: ['delete'], team: ['create'] }, 'OR')).toEqual({ success: false, error: 'Not authorized' });
    expect(authorizeRole('member', { billing: ['read'] }, 'OR')).toEqual({ success: false, error: 'Not authorized' });
  });

  it('grants nothing for no actions, and nothing for an empty request', () => {
    expect(authorizeRole('owner', { member: [] })).toEqual({ success: false, error: 'unauthorized to access resource "member"' });
    expect(authorizeRole('owner', {})).toEqual({ success: false, error: 'Not authorized' });
  });

  it('gives the member role only ac:read', () => {
    expect(authorizeRole('member', { ac: ['read'] })).toEqual({ success: true });
    expect(authorizeRole('member', { ac: ['update'] }).success).toBe(false);
  });
});

describe('rolesGrant: several roles, any one granting', () => {
  it('reads comma-separated values with or without padding, and arrays', () => {
    for (const roles of ['member,admin', 'member, admin', ' admin ,member', ['member', 'admin'], ['member,admin']]) {
      expect(rolesGrant(roles, { member: ['delete'] }), JSON.stringify(roles)).toBe(true);
      expect(rolesGrant(roles, { organization: ['delete'] }), JSON.stringify(roles)).toBe(false);
    }
    expect(rolesGrant('member,owner', { organization: ['delete'] })).toBe(true);
  });

  it('needs one role to grant the whole request: roles do not pool their grants', () => {
    // admin grants member:delete and team:create, member grants ac:read; none grants both organization:delete and ac:read.
    expect(rolesGrant('admin,member', { organization: ['delete'], ac: ['read'] })).toBe(false);
    expect(rolesGrant('owner,member', { organization: ['delete'], ac: ['read'] })).toBe(true);
  });

  it('passes the connector through', () => {
    expect(rolesGrant('member', { organization: ['update'], ac: ['read'] }, 'OR')).toBe(true);
    expect(rolesGrant('member', { organization: ['update'], ac: ['read'] }, 'AND')).toBe(false);
  });

  it('grants nothing for unknown or empty roles', () => {
    expect(rolesGrant('auditor', { ac: ['read'] })).toBe(false);
    expect(rolesGrant('', { ac: ['read'] })).toBe(false);
    expect(rolesGrant(' , ', { ac: ['read'] })).toBe(false);
    expect(rolesGrant('auditor,admin', { team: ['delete'] })).toBe(true);
  });
});
