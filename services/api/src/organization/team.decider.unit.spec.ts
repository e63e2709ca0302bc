import { describe, expect, it } from 'vitest';
import {
  DomainError,
  MemberRemoved,
  OrganizationDeleted,
  TeamCreated,
  TeamMemberAdded,
  TeamMemberRemoved,
  TeamRemoved,
  TeamUpdated,
  type DomainEvent,
  type ErrorCode,
  type TimedEvent,
} from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { acmeWithTeams, at, ORG } from './organization-fixture.ts';
import { evolveOrganization, initialOrganizationState } from './organization.state.ts';
import { activeTeamFor, decideTeam, type CreateTeam, type TeamCommand } from './team.decider.ts';

const team = deciderSpec({ evolve: evolveOrganization, initial: initialOrganizationState, decide: decideTeam });

/** The common organization, with `u-member` in team `t-1`. */
const organization: TimedEvent[] = [
  ...acmeWithTeams,
  at(TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-1', userId: 'u-member' })),
];
const withEvents = (...events: DomainEvent[]): TimedEvent[] => [...organization, ...events.map(at)];

const createTeam = (actorUserId: string, extra: Partial<Pick<CreateTeam, 'name' | 'maximumTeams'>> = {}): TeamCommand => ({
  type: 'create-team',
  actorUserId,
  teamId: 't-new',
  name: 'New',
  maximumTeams: null,
  ...extra,
});
const updateTeam = (actorUserId: string, teamId = 't-1', name: string | undefined = 'Renamed'): TeamCommand => ({
  type: 'update-team',
  actorUserId,
  teamId,
  name,
});
const removeTeam = (actorUserId: string, teamId = 't-2', options: { active?: string | null; allowAll?: boolean } = {}): TeamCommand => ({
  type: 'remove-team',
  actorUserId,
  teamId,
  actorActiveTeamId: options.active ?? null,
  allowRemovingAllTeams: options.allowAll ?? false,
});
const addTeamMember = (actorUserId: string, userId = 'u-admin', teamId = 't-1', maximumMembersPerTeam: number | null = null): TeamCommand => ({
  type: 'add-team-member',
  actorUserId,
  teamId,
  userId,
  teamMemberId: 'tm-new',
  maximumMembersPerTeam,
});
const removeTeamMember = (actorUserId: string, userId = 'u-member', teamId = 't-1'): TeamCommand => ({
  type: 'remove-team-member',
  actorUserId,
  teamId,
  userId,
});

describe('team permissions (spec section 6: team create/update/delete, member update/delete)', () => {
  const allowed = {
    'create-team': [TeamCreated({ organizationId: ORG, teamId: 't-new', name: 'New' })],
    'update-team': [TeamUpdated({ organizationId: ORG, teamId: 't-1', name: 'Renamed' })],
    'remove-team': [TeamRemoved({ organizationId: ORG, teamId: 't-2' })],
    'add-team-member': [TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-new', userId: 'u-admin' })],
    'remove-team-member': [TeamMemberRemoved({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-1', userId: 'u-member' })],
  } satisfies Record<TeamCommand['type'], DomainEvent[]>;
  const refused: Record<TeamCommand['type'], ErrorCode> = {
    'create-team': 'YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION',
    'update-team': 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM',
    'remove-team': 'YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION',
    'add-team-member': 'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER',
    'remove-team-member': 'YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER',
  };
  const commands: Record<TeamCommand['type'], (actor: string) => TeamCommand> = {
    'create-team': (actor) => createTeam(actor),
    'update-team': (actor) => updateTeam(actor),
    'remove-team': (actor) => removeTeam(actor),
    'add-team-member': (actor) => addTeamMember(actor),
    'remove-team-member': (actor) => removeTeamMember(actor),
  };
  // Who holds which role, and whether the table lets that role do every team command.
  const table: Array<{ actor: string; role: string; may: boolean }> = [
    { actor: 'u-owner', role: 'owner', may: true },
    { actor: 'u-admin', role: 'admin', may: true },
    { actor: 'u-member', role: 'member', may: false },
    { actor: 'u-both', role: 'member,admin (any one role granting is enough)', may: true },
    { actor: 'u-stranger-role', role: 'a role the table does not know', may: false },
  ];

  for (const type of Object.keys(commands) as TeamCommand['type'][]) {
    for (const { actor, role, may } of table) {
      it(`${type} by ${role}: ${may ? 'allowed' : 'refused'}`, () => {
        const when = team(organization).when(commands[type](actor));
        if (may) when.then(allowed[type]);
        else when.thenFails(refused[type]);
      });
    }
  }
});

describe('callers outside the organization', () => {
  const cases: Array<[string, TeamCommand, ErrorCode]> = [
    ['create-team', createTeam('u-outsider'), 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION'],
    ['update-team', updateTeam('u-outsider'), 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM'],
    ['remove-team', removeTeam('u-outsider'), 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM'],
    ['add-team-member', addTeamMember('u-outsider'), 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'],
    ['remove-team-member', removeTeamMember('u-outsider'), 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'],
  ];
  for (const [name, command, code] of cases) {
    it(`${name} by a non-member is refused with better-auth's answer`, () => team(organization).when(command).thenFails(code));
    it(`${name} on an organization that never existed is refused the same way`, () => team([]).when(command).thenFails(code));
    it(`${name} on a deleted organization is refused the same way, even for its former owner`, () => {
      const owned = { ...command, actorUserId: 'u-owner' } as TeamCommand;
      const deleted = withEvents(OrganizationDeleted({ organizationId: ORG, slug: 'acme', memberUserIds: ['u-owner'] }));
      team(deleted).when(owned).thenFails(code);
    });
  }

  it('treats a removed member as an outsider', () => {
    team(withEvents(MemberRemoved({ organizationId: ORG, memberId: 'm-u-admin', userId: 'u-admin', reason: 'removed' })))
      .when(createTeam('u-admin'))
      .thenFails('YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION');
  });
});

describe('create-team', () => {
  it('refuses an empty name', () => team(organization).when(createTeam('u-owner', { name: '' })).thenFails('VALIDATION_ERROR'));

  it('accepts a one-character name', () => {
    team(organization).when(createTeam('u-owner', { name: 'x' })).then([TeamCreated({ organizationId: ORG, teamId: 't-new', name: 'x' })]);
  });

  it('stops at the configured maximum number of teams, counting the teams there are now', () => {
    team(organization).when(createTeam('u-owner', { maximumTeams: 2 })).thenFails('YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS');
    team(organization).when(createTeam('u-owner', { maximumTeams: 3 })).then([TeamCreated({ organizationId: ORG, teamId: 't-new', name: 'New' })]);
    team(withEvents(TeamRemoved({ organizationId: ORG, teamId: 't-2' })))
      .when(createTeam('u-owner', { maximumTeams: 2 }))
      .then([TeamCreated({ organizationId: ORG, teamId: 't-new', name: 'New' })]);
  });

  it('checks permission before the limit, as better-auth does', () => {
    team(organization).when(createTeam('u-member', { maximumTeams: 1 })).thenFails('YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION');
  });
});

describe('update-team', () => {
  it('refuses a team of no organization it knows', () => team(organization).when(updateTeam('u-owner', 't-x')).thenFails('TEAM_NOT_FOUND'));

  it('refuses a removed team', () => {
    team(withEvents(TeamRemoved({ organizationId: ORG, teamId: 't-1' }))).when(updateTeam('u-owner')).thenFails('TEAM_NOT_FOUND');
  });

  it('changes nothing when no name is given', () => team(organization).when({ type: 'update-team', actorUserId: 'u-admin', teamId: 't-1', name: undefined }).then([]));

  it('refuses an empty name', () => team(organization).when(updateTeam('u-owner', 't-1', '')).thenFails('VALIDATION_ERROR'));
});

describe('remove-team', () => {
  it('refuses removing the team the caller is working in, before anything else', () => {
    team(organization).when(removeTeam('u-owner', 't-2', { active: 't-2' })).thenFails('YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM');
    team(organization).when(removeTeam('u-member', 't-2', { active: 't-2' })).thenFails('YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM');
  });

  it('removes a team while the caller works in another one', () => {
    team(organization).when(removeTeam('u-owner', 't-2', { active: 't-1' })).then([TeamRemoved({ organizationId: ORG, teamId: 't-2' })]);
  });

  it('refuses an unknown team', () => team(organization).when(removeTeam('u-owner', 't-x')).thenFails('TEAM_NOT_FOUND'));

  it('refuses removing the last team', () => {
    const lastOne = withEvents(TeamRemoved({ organizationId: ORG, teamId: 't-1' }));
    team(lastOne).when(removeTeam('u-owner', 't-2')).thenFails('UNABLE_TO_REMOVE_LAST_TEAM');
  });

  it('removes the last team when removing all teams is allowed', () => {
    const lastOne = withEvents(TeamRemoved({ organizationId: ORG, teamId: 't-1' }));
    team(lastOne).when(removeTeam('u-owner', 't-2', { allowAll: true })).then([TeamRemoved({ organizationId: ORG, teamId: 't-2' })]);
  });

  it('says the team is unknown before it says it is the last one', () => {
    const lastOne = withEvents(TeamRemoved({ organizationId: ORG, teamId: 't-1' }));
    team(lastOne).when(removeTeam('u-owner', 't-1')).thenFails('TEAM_NOT_FOUND');
  });
});

describe('add-team-member', () => {
  it('refuses a user who is not a member of the organization', () => {
    team(organization).when(addTeamMember('u-owner', 'u-outsider')).thenFails('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
  });

  it('refuses an unknown team', () => team(organization).when(addTeamMember('u-owner', 'u-admin', 't-x')).thenFails('TEAM_NOT_FOUND'));

  it('decides nothing for someone already in the team, limit or not', () => {
    team(organization).when(addTeamMember('u-owner', 'u-member', 't-1')).then([]);
    team(organization).when(addTeamMember('u-owner', 'u-member', 't-1', 1)).then([]);
  });

  it('stops at the configured maximum members per team', () => {
    team(organization).when(addTeamMember('u-owner', 'u-admin', 't-1', 1)).thenFails('TEAM_MEMBER_LIMIT_REACHED');
    team(organization)
      .when(addTeamMember('u-owner', 'u-admin', 't-1', 2))
      .then([TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-new', userId: 'u-admin' })]);
  });

  it('frees a seat when a team member leaves the organization', () => {
    team(withEvents(MemberRemoved({ organizationId: ORG, memberId: 'm-u-member', userId: 'u-member', reason: 'left' })))
      .when(addTeamMember('u-owner', 'u-admin', 't-1', 1))
      .then([TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-new', userId: 'u-admin' })]);
  });

  it('lets a user be added back after being removed from the team', () => {
    team(withEvents(TeamMemberRemoved({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-1', userId: 'u-member' })))
      .when(addTeamMember('u-owner', 'u-member', 't-1'))
      .then([TeamMemberAdded({ organizationId: ORG, teamId: 't-1', teamMemberId: 'tm-new', userId: 'u-member' })]);
  });
});

describe('remove-team-member', () => {
  it('refuses a user who is not a member of the organization', () => {
    team(organization).when(removeTeamMember('u-owner', 'u-outsider')).thenFails('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
  });

  it('refuses an unknown team', () => team(organization).when(removeTeamMember('u-owner', 'u-member', 't-x')).thenFails('TEAM_NOT_FOUND'));

  it('refuses a member of the organization who is not in the team', () => {
    team(organization).when(removeTeamMember('u-owner', 'u-member', 't-2')).thenFails('USER_IS_NOT_A_MEMBER_OF_THE_TEAM');
  });

  it('does not let a plain member take themselves out of a team', () => {
    team(organization).when(removeTeamMember('u-member', 'u-member')).thenFails('YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER');
  });
});

describe('the active team of a session', () => {
  const state = organization.reduce(evolveOrganization, initialOrganizationState());

  function refusal(run: () => unknown): { code: string; status: number } | null {
    try {
      run();
      return null;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { code: error.code, status: error.status };
    }
  }

  it('is a team of the organization the caller belongs to', () => {
    expect(activeTeamFor(state, { teamId: 't-1', userId: 'u-member' })).toMatchObject({ id: 't-1', name: 'Core' });
  });

  it('refuses a team the caller is not in with 403', () => {
    expect(refusal(() => activeTeamFor(state, { teamId: 't-2', userId: 'u-member' }))).toEqual({
      code: 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
      status: 403,
    });
  });

  it('refuses a team that is not in the organization', () => {
    expect(refusal(() => activeTeamFor(state, { teamId: 't-x', userId: 'u-member' }))).toEqual({ code: 'TEAM_NOT_FOUND', status: 400 });
    expect(refusal(() => activeTeamFor(initialOrganizationState(), { teamId: 't-1', userId: 'u-member' }))).toEqual({
      code: 'TEAM_NOT_FOUND',
      status: 400,
    });
  });
});
