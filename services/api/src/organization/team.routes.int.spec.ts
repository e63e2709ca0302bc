import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { expectRefusal, organizationApi, type Answer, type SignedUpUser } from '../../../../tests/support/organization-api.ts';

const API_KEY = 'team-routes-server-api-key-0123456789abcdef';

interface TeamJson {
  id: string;
  name: string;
  organizationId: string;
  createdAt: string;
  updatedAt: string;
}
interface TeamMemberJson {
  id: string;
  teamId: string;
  userId: string;
  createdAt: string;
}

const baseEnv = {
  AUTH_SECRET: 'team-routes-secret-0123456789abcdefghij',
  BASE_URL: 'http://localhost:3000',
  AUTH_RATE_LIMIT_ENABLED: 'false',
  AUTH_SERVER_API_KEY: API_KEY,
};

function expectTeam(answer: Answer, expected: { name: string; organizationId: string }): TeamJson {
  expect(answer.status, JSON.stringify(answer.json)).toBe(200);
  const team = answer.json as TeamJson;
  expect(team).toEqual({
    id: expect.any(String),
    name: expected.name,
    organizationId: expected.organizationId,
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  });
  expect(Date.parse(team.updatedAt)).toBeGreaterThanOrEqual(Date.parse(team.createdAt));
  return team;
}

const teamNames = (answer: Answer): string[] => (answer.json as TeamJson[]).map((t) => t.name).sort();

/**
 * Teams over HTTP (`inject` on real stores, projections in-process): every team route for owner, admin,
 * member and outsider, with better-auth 1.7's answers, statuses and messages.
 */
describe('team routes (teams on, default team, last team protected)', () => {
  let api: InProcessApi;
  let http: ReturnType<typeof organizationApi>;
  let owner: SignedUpUser;
  let admin: SignedUpUser;
  let member: SignedUpUser;
  let outsider: SignedUpUser;
  let organizationId: string;
  let defaultTeam: TeamJson;

  beforeAll(async () => {
    api = await startInProcessApi('team_routes', baseEnv);
    http = organizationApi(api);
    owner = await http.newUser('owner');
    admin = await http.newUser('admin');
    member = await http.newUser('member');
    outsider = await http.newUser('outsider');
    organizationId = await http.newOrganization(owner, 'Acme', [
      [admin, 'admin'],
      [member, 'member'],
    ]);
    const listed = await http.call('GET', '/organization/list-teams', undefined, owner.headers);
    expect(listed.status).toBe(200);
    expect(listed.json).toHaveLength(1);
    defaultTeam = (listed.json as TeamJson[])[0]!;
  });

  afterAll(async () => {
    await api?.close();
  });

  it("gives a new organization a team of its own name with its creator in it, active on the creator's session", async () => {
    expect(defaultTeam).toMatchObject({ name: 'Acme', organizationId });
    expect(await http.activeSelection(owner)).toEqual({ activeOrganizationId: organizationId, activeTeamId: defaultTeam.id });
    const members = await http.call('GET', '/organization/list-team-members', undefined, owner.headers);
    expect(members.status).toBe(200);
    expect((members.json as TeamMemberJson[]).map((m) => m.userId)).toEqual([owner.userId]);
  });

  it('lets owners and admins create teams, and refuses members, outsiders and anonymous callers', async () => {
    expectTeam(await http.call('POST', '/organization/create-team', { name: 'Owners' }, owner.headers), { name: 'Owners', organizationId });
    expectTeam(await http.call('POST', '/organization/create-team', { name: 'A', organizationId }, admin.headers), { name: 'A', organizationId });
    expectRefusal(
      await http.call('POST', '/organization/create-team', { name: 'Members' }, member.headers),
      'YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION',
    );
    expectRefusal(
      await http.call('POST', '/organization/create-team', { name: 'Outside', organizationId }, outsider.headers),
      'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION',
    );
    expectRefusal(await http.call('POST', '/organization/create-team', { name: 'Nowhere' }, outsider.headers), 'NO_ACTIVE_ORGANIZATION');
    expectRefusal(await http.call('POST', '/organization/create-team', { name: 'Anon', organizationId }), 'UNAUTHORIZED');
    expectRefusal(await http.call('POST', '/organization/create-team', { name: '' }, owner.headers), 'VALIDATION_ERROR');
    expectRefusal(await http.call('POST', '/organization/create-team', {}, owner.headers), 'VALIDATION_ERROR');
    expect(teamNames(await http.call('GET', '/organization/list-teams', undefined, member.headers))).toEqual(['A', 'Acme', 'Owners']);
  });

  it('lets owners and admins rename a team, and refuses members, unknown teams and empty names', async () => {
    const team = expectTeam(await http.call('POST', '/organization/create-team', { name: 'Draft' }, owner.headers), {
      name: 'Draft',
      organizationId,
    });
    const renamed = expectTeam(await http.call('POST', '/organization/update-team', { teamId: team.id, data: { name: 'Final' } }, admin.headers), {
      name: 'Final',
      organizationId,
    });
    expect(renamed).toMatchObject({ id: team.id, createdAt: team.createdAt });
    expect(Date.parse(renamed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(team.updatedAt));
    expectRefusal(
      await http.call('POST', '/organization/update-team', { teamId: team.id, data: { name: 'Mine' } }, member.headers),
      'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM',
    );
    expectRefusal(
      await http.call('POST', '/organization/update-team', { teamId: team.id, data: { name: 'Theirs', organizationId } }, outsider.headers),
      'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM',
    );
    expectRefusal(await http.call('POST', '/organization/update-team', { teamId: 'no-such-team', data: { name: 'X' } }, owner.headers), 'TEAM_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/update-team', { teamId: team.id, data: { name: '' } }, owner.headers), 'VALIDATION_ERROR');
    expectRefusal(await http.call('POST', '/organization/update-team', { teamId: team.id, data: { name: 'X' } }), 'UNAUTHORIZED');
    const listed = await http.call('GET', '/organization/list-teams', undefined, owner.headers);
    expect((listed.json as TeamJson[]).find((t) => t.id === team.id)).toEqual(renamed);
  });

  it('lists teams for members only', async () => {
    const listed = await http.call('GET', `/organization/list-teams?organizationId=${organizationId}`, undefined, member.headers);
    expect(listed.status).toBe(200);
    expect((listed.json as TeamJson[]).every((t) => t.organizationId === organizationId)).toBe(true);
    expectRefusal(
      await http.call('GET', `/organization/list-teams?organizationId=${organizationId}`, undefined, outsider.headers),
      'YOU_ARE_NOT_ALLOWED_TO_ACCESS_THIS_ORGANIZATION',
    );
    expectRefusal(await http.call('GET', '/organization/list-teams', undefined, outsider.headers), 'NO_ACTIVE_ORGANIZATION');
    expectRefusal(await http.call('GET', `/organization/list-teams?organizationId=${organizationId}`), 'UNAUTHORIZED');
  });

  it('adds and removes team members for owners and admins only, and answers as better-auth', async () => {
    const team = expectTeam(await http.call('POST', '/organization/create-team', { name: 'Crew' }, owner.headers), { name: 'Crew', organizationId });
    const added = await http.call('POST', '/organization/add-team-member', { teamId: team.id, userId: member.userId }, admin.headers);
    expect(added.status, JSON.stringify(added.json)).toBe(200);
    const teamMember = added.json as TeamMemberJson;
    expect(teamMember).toEqual({ id: expect.any(String), teamId: team.id, userId: member.userId, createdAt: expect.any(String) });
    // Adding again answers the same membership.
    expect(await http.call('POST', '/organization/add-team-member', { teamId: team.id, userId: member.userId }, owner.headers)).toEqual({
      status: 200,
      json: teamMember,
    });

    expectRefusal(
      await http.call('POST', '/organization/add-team-member', { teamId: team.id, userId: admin.userId }, member.headers),
      'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER',
    );
    expectRefusal(
      await http.call('POST', '/organization/add-team-member', { teamId: team.id, userId: outsider.userId }, owner.headers),
      'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    );
    expectRefusal(
      await http.call('POST', '/organization/add-team-member', { teamId: team.id, userId: member.userId, organizationId }, outsider.headers),
      'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    );
    expectRefusal(
      await http.call('POST', '/organization/add-team-member', { teamId: 'no-such-team', userId: member.userId }, owner.headers),
      'TEAM_NOT_FOUND',
    );
    expectRefusal(await http.call('POST', '/organization/add-team-member', { teamId: team.id, userId: member.userId }), 'UNAUTHORIZED');

    const members = await http.call('GET', `/organization/list-team-members?teamId=${team.id}`, undefined, member.headers);
    expect(members).toEqual({ status: 200, json: [teamMember] });

    expectRefusal(
      await http.call('POST', '/organization/remove-team-member', { teamId: team.id, userId: member.userId }, member.headers),
      'YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER',
    );
    expect(await http.call('POST', '/organization/remove-team-member', { teamId: team.id, userId: member.userId }, admin.headers)).toEqual({
      status: 200,
      json: { message: 'Team member removed successfully.' },
    });
    expectRefusal(
      await http.call('POST', '/organization/remove-team-member', { teamId: team.id, userId: member.userId }, admin.headers),
      'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
    );
    expectRefusal(
      await http.call('POST', '/organization/remove-team-member', { teamId: team.id, userId: outsider.userId }, admin.headers),
      'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    );
    expectRefusal(
      await http.call('GET', `/organization/list-team-members?teamId=${team.id}`, undefined, member.headers),
      'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
    );
  });

  it("shows a team's members to the team's own members only", async () => {
    const team = expectTeam(await http.call('POST', '/organization/create-team', { name: 'Closed' }, admin.headers), { name: 'Closed', organizationId });
    expectRefusal(
      await http.call('GET', `/organization/list-team-members?teamId=${team.id}`, undefined, owner.headers),
      'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
    );
    expectRefusal(
      await http.call('GET', `/organization/list-team-members?teamId=${team.id}`, undefined, outsider.headers),
      'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
    );
    expectRefusal(await http.call('GET', '/organization/list-team-members?teamId=no-such-team', undefined, owner.headers), 'TEAM_NOT_FOUND');
    expectRefusal(await http.call('GET', '/organization/list-team-members', undefined, outsider.headers), 'YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM');
  });

  it("lists a user's own teams, and another member's for who may update members", async () => {
    const team = expectTeam(await http.call('POST', '/organization/create-team', { name: 'Listed' }, owner.headers), { name: 'Listed', organizationId });
    expect((await http.call('POST', '/organization/add-team-member', { teamId: team.id, userId: member.userId }, owner.headers)).status).toBe(200);

    const own = await http.call('GET', '/organization/list-user-teams', undefined, member.headers);
    expect(own.status).toBe(200);
    expect((own.json as TeamJson[]).map((t) => t.id)).toContain(team.id);
    expect((own.json as TeamJson[]).map((t) => t.id)).not.toContain(defaultTeam.id);
    const scoped = await http.call('GET', `/organization/list-user-teams?organizationId=${organizationId}`, undefined, member.headers);
    expect(scoped).toEqual(own);

    const byAdmin = await http.call('GET', `/organization/list-user-teams?userId=${member.userId}`, undefined, admin.headers);
    expect(byAdmin).toEqual(own);
    expectRefusal(
      await http.call('GET', `/organization/list-user-teams?userId=${owner.userId}`, undefined, member.headers),
      'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER',
    );
    expectRefusal(
      await http.call('GET', `/organization/list-user-teams?userId=${outsider.userId}`, undefined, owner.headers),
      'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    );
    expectRefusal(
      await http.call('GET', `/organization/list-user-teams?organizationId=${organizationId}`, undefined, outsider.headers),
      'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION',
    );
    expect(await http.call('GET', '/organization/list-user-teams', undefined, outsider.headers)).toEqual({ status: 200, json: [] });
    expectRefusal(await http.call('GET', '/organization/list-user-teams'), 'UNAUTHORIZED');
  });

  it('sets the active team on the session for members of the team, and clears it with null', async () => {
    const team = expectTeam(await http.call('POST', '/organization/create-team', { name: 'Active' }, owner.headers), { name: 'Active', organizationId });
    const other = expectTeam(await http.call('POST', '/organization/create-team', { name: 'Other' }, owner.headers), { name: 'Other', organizationId });
    expect((await http.call('POST', '/organization/add-team-member', { teamId: team.id, userId: member.userId }, owner.headers)).status).toBe(200);

    expect(await http.call('POST', '/organization/set-active-team', { teamId: team.id }, member.headers)).toEqual({ status: 200, json: team });
    expect(await http.activeSelection(member)).toEqual({ activeOrganizationId: organizationId, activeTeamId: team.id });
    // Without a team id the current one is answered again.
    expect(await http.call('POST', '/organization/set-active-team', {}, member.headers)).toEqual({ status: 200, json: team });
    const members = await http.call('GET', '/organization/list-team-members', undefined, member.headers);
    expect((members.json as TeamMemberJson[]).map((m) => m.userId)).toEqual([member.userId]);

    expectRefusal(
      await http.call('POST', '/organization/set-active-team', { teamId: other.id }, member.headers),
      'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
      403,
    );
    expectRefusal(await http.call('POST', '/organization/set-active-team', { teamId: 'no-such-team' }, member.headers), 'TEAM_NOT_FOUND');
    expect(await http.activeSelection(member)).toEqual({ activeOrganizationId: organizationId, activeTeamId: team.id });

    expect(await http.call('POST', '/organization/set-active-team', { teamId: null }, member.headers)).toEqual({ status: 200, json: null });
    expect(await http.activeSelection(member)).toEqual({ activeOrganizationId: organizationId, activeTeamId: null });
    expect(await http.call('POST', '/organization/set-active-team', {}, member.headers)).toEqual({ status: 200, json: null });

    expectRefusal(await http.call('POST', '/organization/set-active-team', { teamId: team.id }, outsider.headers), 'NO_ACTIVE_ORGANIZATION');
    expectRefusal(await http.call('POST', '/organization/set-active-team', { teamId: team.id }), 'UNAUTHORIZED');
  });

  it('removes teams for owners and admins, never the caller\'s active team, and clears it as active team of other sessions', async () => {
    const team = expectTeam(await http.call('POST', '/organization/create-team', { name: 'Doomed' }, owner.headers), { name: 'Doomed', organizationId });
    expect((await http.call('POST', '/organization/add-team-member', { teamId: team.id, userId: member.userId }, owner.headers)).status).toBe(200);
    expect((await http.call('POST', '/organization/set-active-team', { teamId: team.id }, member.headers)).status).toBe(200);

    expectRefusal(
      await http.call('POST', '/organization/remove-team', { teamId: team.id }, member.headers),
      'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM',
    );
    expectRefusal(
      await http.call('POST', '/organization/remove-team', { teamId: defaultTeam.id }, member.headers),
      'YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION',
    );
    expectRefusal(
      await http.call('POST', '/organization/remove-team', { teamId: defaultTeam.id }, owner.headers),
      'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM',
    );
    expectRefusal(
      await http.call('POST', '/organization/remove-team', { teamId: team.id, organizationId }, outsider.headers),
      'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM',
    );
    expectRefusal(await http.call('POST', '/organization/remove-team', { teamId: 'no-such-team' }, admin.headers), 'TEAM_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/remove-team', { teamId: team.id }), 'NO_ACTIVE_ORGANIZATION');
    expectRefusal(await http.call('POST', '/organization/remove-team', { teamId: team.id, organizationId }), 'UNAUTHORIZED');

    expect(await http.call('POST', '/organization/remove-team', { teamId: team.id }, admin.headers)).toEqual({
      status: 200,
      json: { message: 'Team removed successfully.' },
    });
    expect(await http.activeSelection(member)).toEqual({ activeOrganizationId: organizationId, activeTeamId: null });
    const listed = await http.call('GET', '/organization/list-teams', undefined, owner.headers);
    expect((listed.json as TeamJson[]).map((t) => t.id)).not.toContain(team.id);
    expectRefusal(await http.call('GET', `/organization/list-team-members?teamId=${team.id}`, undefined, member.headers), 'TEAM_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/remove-team', { teamId: team.id }, admin.headers), 'TEAM_NOT_FOUND');
  });

  it('keeps the last team of an organization', async () => {
    const solo = await http.newUser('solo');
    const soloOrganization = await http.newOrganization(solo, 'Solo');
    const [only] = (await http.call('GET', '/organization/list-teams', undefined, solo.headers)).json as TeamJson[];
    expect(only).toMatchObject({ name: 'Solo', organizationId: soloOrganization });
    // The creator works in it, and may not remove it from under themselves.
    expectRefusal(await http.call('POST', '/organization/remove-team', { teamId: only!.id }, solo.headers), 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM');
    expect((await http.call('POST', '/organization/set-active-team', { teamId: null }, solo.headers)).status).toBe(200);
    expectRefusal(await http.call('POST', '/organization/remove-team', { teamId: only!.id }, solo.headers), 'UNABLE_TO_REMOVE_LAST_TEAM');

    const second = expectTeam(await http.call('POST', '/organization/create-team', { name: 'Second' }, solo.headers), {
      name: 'Second',
      organizationId: soloOrganization,
    });
    expect((await http.call('POST', '/organization/remove-team', { teamId: only!.id }, solo.headers)).status).toBe(200);
    expectRefusal(await http.call('POST', '/organization/remove-team', { teamId: second.id }, solo.headers), 'UNABLE_TO_REMOVE_LAST_TEAM');
    expect((await http.call('GET', '/organization/list-teams', undefined, solo.headers)).json).toEqual([second]);
  });
});

describe('team routes with AUTH_ORGANIZATION_ALLOW_REMOVING_ALL_TEAMS and team limits', () => {
  let api: InProcessApi;
  let http: ReturnType<typeof organizationApi>;

  beforeAll(async () => {
    api = await startInProcessApi('team_routes_limits', {
      ...baseEnv,
      AUTH_ORGANIZATION_ALLOW_REMOVING_ALL_TEAMS: 'true',
      AUTH_ORGANIZATION_MAXIMUM_TEAMS: '2',
      AUTH_ORGANIZATION_MAXIMUM_MEMBERS_PER_TEAM: '1',
    });
    http = organizationApi(api);
  });

  afterAll(async () => {
    await api?.close();
  });

  it('stops at the maximum number of teams and of members per team, and removes the last team', async () => {
    const owner = await http.newUser('owner');
    const member = await http.newUser('member');
    const organizationId = await http.newOrganization(owner, 'Limits', [[member, 'member']]);
    const [defaultTeam] = (await http.call('GET', '/organization/list-teams', undefined, owner.headers)).json as TeamJson[];

    const second = expectTeam(await http.call('POST', '/organization/create-team', { name: 'Second' }, owner.headers), {
      name: 'Second',
      organizationId,
    });
    expectRefusal(await http.call('POST', '/organization/create-team', { name: 'Third' }, owner.headers), 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS');

    // The default team holds its creator already: one seat, taken.
    expectRefusal(
      await http.call('POST', '/organization/add-team-member', { teamId: defaultTeam!.id, userId: member.userId }, owner.headers),
      'TEAM_MEMBER_LIMIT_REACHED',
    );
    expect((await http.call('POST', '/organization/add-team-member', { teamId: second.id, userId: member.userId }, owner.headers)).status).toBe(200);

    expect((await http.call('POST', '/organization/set-active-team', { teamId: null }, owner.headers)).status).toBe(200);
    for (const team of [second, defaultTeam!]) {
      expect(await http.call('POST', '/organization/remove-team', { teamId: team.id }, owner.headers)).toEqual({
        status: 200,
        json: { message: 'Team removed successfully.' },
      });
    }
    expect(await http.call('GET', '/organization/list-teams', undefined, owner.headers)).toEqual({ status: 200, json: [] });
    expect(await http.call('GET', '/organization/list-user-teams', undefined, member.headers)).toEqual({ status: 200, json: [] });
  });
});

describe('team routes with teams switched off', () => {
  let api: InProcessApi;
  let http: ReturnType<typeof organizationApi>;

  beforeAll(async () => {
    api = await startInProcessApi('team_routes_off', { ...baseEnv, AUTH_ORGANIZATION_TEAMS_ENABLED: 'false' });
    http = organizationApi(api);
  });

  afterAll(async () => {
    await api?.close();
  });

  it('has no team endpoints, as better-auth registers none without teams', async () => {
    const user = await http.newUser('user');
    const posts = ['create-team', 'update-team', 'remove-team', 'set-active-team', 'add-team-member', 'remove-team-member'];
    const gets = ['list-teams', 'list-user-teams', 'list-team-members'];
    for (const path of posts) expectRefusal(await http.call('POST', `/organization/${path}`, { teamId: 't', name: 'n' }, user.headers), 'NOT_FOUND');
    for (const path of gets) expectRefusal(await http.call('GET', `/organization/${path}`, undefined, user.headers), 'NOT_FOUND');
  });
});
