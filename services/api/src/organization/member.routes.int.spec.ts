import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { expectOk, expectRefusal, organizationApi, type MemberJson, type SignedUpUser } from '../../../../tests/support/organization-api.ts';

const API_KEY = 'member-routes-server-api-key-0123456789abcdef';
const MEMBERSHIP_LIMIT = 10;
const server = { 'x-api-key': API_KEY };

interface MemberPageJson {
  members: Required<Omit<MemberJson, 'teamId'>>[];
  total: number;
}

/**
 * The member endpoints over HTTP (`inject` on real stores, projections in-process): every route's answer
 * and each of its refusals for owner, admin, member and outsider, with better-auth 1.7's statuses and the
 * spec's messages.
 */
describe('member routes', () => {
  let api: InProcessApi;
  let http: ReturnType<typeof organizationApi>;
  let owner: SignedUpUser;
  let admin: SignedUpUser;
  let member: SignedUpUser;
  let outsider: SignedUpUser;
  let organizationId: string;
  const memberIds = new Map<string, string>();

  async function join(user: SignedUpUser, role: string | string[], orgId = organizationId): Promise<MemberJson> {
    const added = expectOk<MemberJson>(await http.call('POST', '/organization/add-member', { userId: user.userId, role, organizationId: orgId }, server));
    expectOk(await http.call('POST', '/organization/set-active', { organizationId: orgId }, user.headers));
    memberIds.set(user.userId, added.id);
    return added;
  }

  const rowCount = async (query: ReturnType<typeof sql.unsafe>): Promise<number> => Number(await api.db.pool.oneFirst(query));

  beforeAll(async () => {
    api = await startInProcessApi('member_routes', {
      AUTH_SECRET: 'member-routes-secret-0123456789abcdefghij',
      BASE_URL: 'http://localhost:3000',
      AUTH_RATE_LIMIT_ENABLED: 'false',
      AUTH_SERVER_API_KEY: API_KEY,
      AUTH_ORGANIZATION_MEMBERSHIP_LIMIT: String(MEMBERSHIP_LIMIT),
    });
    http = organizationApi(api);
    owner = await http.newUser('owner');
    admin = await http.newUser('admin');
    member = await http.newUser('member');
    outsider = await http.newUser('outsider');
    const created = expectOk<{ id: string; members: MemberJson[] }>(await http.call('POST', '/organization/create', { name: 'Acme', slug: 'acme' }, owner.headers));
    organizationId = created.id;
    memberIds.set(owner.userId, created.members[0]!.id);
    await join(admin, 'admin');
    await join(member, 'member');
  });

  afterAll(async () => {
    await api?.close();
  });

  describe('add-member (server only)', () => {
    it('adds a user with the roles as sent, in a team when asked', async () => {
      const added = await join(await http.newUser('multi'), ['member', ' admin']);
      expect(added).toEqual({ id: expect.any(String), organizationId, userId: added.userId, role: 'member,admin', createdAt: expect.any(String) });
      const team = expectOk<{ id: string }>(await http.call('POST', '/organization/create-team', { name: 'Core' }, owner.headers));
      const teamed = await http.newUser('teamed');
      const inTeam = expectOk<MemberJson>(
        await http.call('POST', '/organization/add-member', { userId: teamed.userId, role: 'member', organizationId, teamId: team.id }, server),
      );
      expect(inTeam).toMatchObject({ userId: teamed.userId, role: 'member', teamId: team.id });
      expect(await rowCount(sql.unsafe`SELECT count(*) FROM "teamMember" WHERE "teamId" = ${team.id} AND "userId" = ${teamed.userId}`)).toBe(1);
      // Done with them: they leave, so the rest of the spec sees owner, admin and member only.
      for (const id of [added.id, inTeam.id]) expectOk(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: id }, owner.headers));
    });

    it('does not exist for clients, and refuses a wrong key', async () => {
      const body = { userId: outsider.userId, role: 'member', organizationId };
      expectRefusal(await http.call('POST', '/organization/add-member', body, owner.headers), 'NOT_FOUND');
      expectRefusal(await http.call('POST', '/organization/add-member', body, { 'x-api-key': 'wrong' }), 'UNAUTHORIZED');
      // A refusal of the body would give the route away.
      expectRefusal(await http.call('POST', '/organization/add-member', { role: 7 }, owner.headers), 'NOT_FOUND');
      expectRefusal(await http.call('POST', '/organization/add-member', { role: 7 }, { 'x-api-key': 'wrong' }), 'UNAUTHORIZED');
    });

    it('refuses a member again, an unknown user, an unknown team, no organization and a bad body', async () => {
      expectRefusal(
        await http.call('POST', '/organization/add-member', { userId: member.userId, role: 'admin', organizationId }, server),
        'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION',
      );
      expectRefusal(await http.call('POST', '/organization/add-member', { userId: 'nobody', role: 'member', organizationId }, server), 'USER_NOT_FOUND', 400);
      expectRefusal(
        await http.call('POST', '/organization/add-member', { userId: outsider.userId, role: 'member', organizationId, teamId: 'no-team' }, server),
        'TEAM_NOT_FOUND',
      );
      expectRefusal(await http.call('POST', '/organization/add-member', { userId: outsider.userId, role: 'member' }, server), 'NO_ACTIVE_ORGANIZATION');
      expectRefusal(
        await http.call('POST', '/organization/add-member', { userId: outsider.userId, role: 'member', organizationId: 'no-such-org' }, server),
        'ORGANIZATION_NOT_FOUND',
      );
      expectRefusal(await http.call('POST', '/organization/add-member', { userId: outsider.userId, organizationId }, server), 'VALIDATION_ERROR');
    });

    it('stops at the membership limit', async () => {
      const founder = await http.newUser('founder');
      const small = expectOk<{ id: string }>(await http.call('POST', '/organization/create', { name: 'Small', slug: 'small' }, founder.headers));
      for (let i = 1; i < MEMBERSHIP_LIMIT; i += 1) {
        const user = await http.newUser(`filler${i}`);
        expectOk(await http.call('POST', '/organization/add-member', { userId: user.userId, role: 'member', organizationId: small.id }, server));
      }
      expectRefusal(
        await http.call('POST', '/organization/add-member', { userId: outsider.userId, role: 'member', organizationId: small.id }, server),
        'ORGANIZATION_MEMBERSHIP_LIMIT_REACHED',
      );
      expect(await rowCount(sql.unsafe`SELECT count(*) FROM member WHERE "organizationId" = ${small.id}`)).toBe(MEMBERSHIP_LIMIT);
    });
  });

  describe('get-active-member, get-active-member-role, list-members', () => {
    it('answers the caller as a member of the active organization, with the user', async () => {
      expect(expectOk(await http.call('GET', '/organization/get-active-member', undefined, admin.headers))).toEqual({
        id: memberIds.get(admin.userId),
        organizationId,
        userId: admin.userId,
        role: 'admin',
        createdAt: expect.any(String),
        user: { id: admin.userId, name: admin.name, email: admin.email, image: null },
      });
      expectRefusal(await http.call('GET', '/organization/get-active-member', undefined, outsider.headers), 'NO_ACTIVE_ORGANIZATION');
      expectRefusal(await http.call('GET', '/organization/get-active-member'), 'UNAUTHORIZED');
    });

    it("answers the caller's role, or another member's, by active organization, id or slug", async () => {
      expect(expectOk(await http.call('GET', '/organization/get-active-member-role', undefined, member.headers))).toEqual({ role: 'member' });
      expect(expectOk(await http.call('GET', `/organization/get-active-member-role?userId=${owner.userId}`, undefined, member.headers))).toEqual({ role: 'owner' });
      expect(expectOk(await http.call('GET', '/organization/get-active-member-role?organizationSlug=acme', undefined, admin.headers))).toEqual({ role: 'admin' });
      expectRefusal(
        await http.call('GET', `/organization/get-active-member-role?organizationId=${organizationId}`, undefined, outsider.headers),
        'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION',
      );
      expectRefusal(
        await http.call('GET', `/organization/get-active-member-role?userId=${outsider.userId}`, undefined, member.headers),
        'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION',
      );
      expectRefusal(await http.call('GET', '/organization/get-active-member-role?organizationSlug=nope', undefined, member.headers), 'ORGANIZATION_NOT_FOUND');
      expectRefusal(await http.call('GET', '/organization/get-active-member-role', undefined, outsider.headers), 'NO_ACTIVE_ORGANIZATION');
    });

    it('lists members with their users and the total, paged, sorted and filtered', async () => {
      const all = expectOk<MemberPageJson>(await http.call('GET', '/organization/list-members', undefined, member.headers));
      expect(all.total).toBe(3);
      expect(all.members.map((m) => [m.user.email, m.role])).toEqual([
        [owner.email, 'owner'],
        [admin.email, 'admin'],
        [member.email, 'member'],
      ]);
      const page = expectOk<MemberPageJson>(await http.call('GET', '/organization/list-members?limit=1&offset=1', undefined, member.headers));
      expect({ total: page.total, users: page.members.map((m) => m.userId) }).toEqual({ total: 3, users: [admin.userId] });
      const newestFirst = expectOk<MemberPageJson>(await http.call('GET', '/organization/list-members?sortBy=createdAt&sortDirection=desc', undefined, member.headers));
      expect(newestFirst.members.map((m) => m.userId)).toEqual([member.userId, admin.userId, owner.userId]);
      const admins = expectOk<MemberPageJson>(await http.call('GET', '/organization/list-members?filterField=role&filterValue=admin', undefined, owner.headers));
      expect({ total: admins.total, users: admins.members.map((m) => m.userId) }).toEqual({ total: 1, users: [admin.userId] });
      const notOwners = expectOk<MemberPageJson>(
        await http.call('GET', '/organization/list-members?filterField=role&filterOperator=ne&filterValue=owner', undefined, owner.headers),
      );
      expect(notOwners.total).toBe(2);
      const byPrefix = expectOk<MemberPageJson>(
        await http.call('GET', '/organization/list-members?filterField=role&filterOperator=starts_with&filterValue=own', undefined, owner.headers),
      );
      expect(byPrefix.members.map((m) => m.userId)).toEqual([owner.userId]);
      const bySlug = expectOk<MemberPageJson>(await http.call('GET', '/organization/list-members?organizationSlug=acme', undefined, admin.headers));
      expect(bySlug.total).toBe(3);
    });

    it('refuses outsiders, unknown organizations and bad queries', async () => {
      expectRefusal(
        await http.call('GET', `/organization/list-members?organizationId=${organizationId}`, undefined, outsider.headers),
        'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION',
      );
      expectRefusal(await http.call('GET', '/organization/list-members', undefined, outsider.headers), 'NO_ACTIVE_ORGANIZATION');
      expectRefusal(await http.call('GET', '/organization/list-members?organizationSlug=nope', undefined, owner.headers), 'ORGANIZATION_NOT_FOUND');
      expectRefusal(await http.call('GET', '/organization/list-members?sortBy=password', undefined, owner.headers), 'INVALID_QUERY_PARAMETERS');
      expectRefusal(
        await http.call('GET', '/organization/list-members?filterField=createdAt&filterOperator=lt&filterValue=yesterday', undefined, owner.headers),
        'INVALID_QUERY_PARAMETERS',
      );
      expectRefusal(await http.call('GET', '/organization/list-members'), 'UNAUTHORIZED');
    });
  });

  describe('update-member-role', () => {
    it('lets owners and admins change roles; only an owner hands out or takes away the owner role', async () => {
      const target = await http.newUser('target');
      const added = await join(target, 'member');
      const promoted = expectOk<MemberJson>(
        await http.call('POST', '/organization/update-member-role', { memberId: added.id, role: ['member', 'admin'] }, admin.headers),
      );
      expect(promoted).toEqual({ ...added, role: 'member,admin' });
      expect(expectOk(await http.call('GET', '/organization/get-active-member-role', undefined, target.headers))).toEqual({ role: 'member,admin' });

      expectRefusal(await http.call('POST', '/organization/update-member-role', { memberId: added.id, role: 'owner' }, admin.headers), 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
      expectRefusal(
        await http.call('POST', '/organization/update-member-role', { memberId: memberIds.get(owner.userId), role: 'admin' }, admin.headers),
        'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER',
      );
      expectRefusal(await http.call('POST', '/organization/update-member-role', { memberId: added.id, role: 'admin' }, member.headers), 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');

      const madeOwner = expectOk<MemberJson>(await http.call('POST', '/organization/update-member-role', { memberId: added.id, role: 'owner' }, owner.headers));
      expect(madeOwner.role).toBe('owner');
      expectOk(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: added.id }, owner.headers));
    });

    it('refuses the last owner stepping down, unknown roles, unknown members and callers outside', async () => {
      expectRefusal(
        await http.call('POST', '/organization/update-member-role', { memberId: memberIds.get(owner.userId), role: 'admin' }, owner.headers),
        'YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER',
      );
      const unknownRole = await http.call('POST', '/organization/update-member-role', { memberId: memberIds.get(member.userId), role: 'admin,boss' }, owner.headers);
      expectRefusal(unknownRole, 'ROLE_NOT_FOUND');
      expect((unknownRole.json as { details?: string }).details).toBe('boss');
      expectRefusal(await http.call('POST', '/organization/update-member-role', { memberId: 'no-member', role: 'admin' }, owner.headers), 'MEMBER_NOT_FOUND');
      expectRefusal(
        await http.call('POST', '/organization/update-member-role', { memberId: memberIds.get(member.userId), role: 'admin', organizationId }, outsider.headers),
        'MEMBER_NOT_FOUND',
      );
      expectRefusal(await http.call('POST', '/organization/update-member-role', { memberId: memberIds.get(member.userId), role: 'admin' }, outsider.headers), 'NO_ACTIVE_ORGANIZATION');
      expectRefusal(await http.call('POST', '/organization/update-member-role', { memberId: memberIds.get(member.userId), role: [] }, owner.headers), 'VALIDATION_ERROR');
      expectRefusal(await http.call('POST', '/organization/update-member-role', { memberId: memberIds.get(member.userId), role: 'admin' }), 'UNAUTHORIZED');
      expect(expectOk(await http.call('GET', '/organization/get-active-member-role', undefined, member.headers))).toEqual({ role: 'member' });
    });
  });

  describe('remove-member', () => {
    it('removes by id, or by email (answered with the user); the removed user no longer works in the organization', async () => {
      const byId = await http.newUser('by-id');
      const byIdMember = await join(byId, 'member');
      expect(expectOk(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: byIdMember.id }, admin.headers))).toEqual({ member: byIdMember });
      expect(await http.activeSelection(byId)).toEqual({ activeOrganizationId: null, activeTeamId: null });
      expect(expectOk(await http.call('GET', '/organization/list', undefined, byId.headers))).toEqual([]);

      const byEmail = await http.newUser('by-email');
      const byEmailMember = await join(byEmail, 'admin');
      expect(expectOk(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: byEmail.email.toUpperCase() }, owner.headers))).toEqual({
        member: { ...byEmailMember, user: { id: byEmail.userId, name: byEmail.name, email: byEmail.email, image: null } },
      });
      expect(await rowCount(sql.unsafe`SELECT count(*) FROM member WHERE "userId" = ${byEmail.userId}`)).toBe(0);
    });

    it('lets an admin remove themself, which clears their active organization', async () => {
      const self = await http.newUser('self');
      const selfMember = await join(self, 'admin');
      expect(expectOk(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: selfMember.id }, self.headers))).toEqual({ member: selfMember });
      expect(await http.activeSelection(self)).toEqual({ activeOrganizationId: null, activeTeamId: null });
    });

    it('refuses members, the only owner, unknown members and callers outside', async () => {
      expectRefusal(
        await http.call('POST', '/organization/remove-member', { memberIdOrEmail: memberIds.get(admin.userId) }, member.headers),
        'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER',
      );
      expectRefusal(
        await http.call('POST', '/organization/remove-member', { memberIdOrEmail: memberIds.get(member.userId) }, member.headers),
        'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER',
      );
      expectRefusal(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: owner.email }, admin.headers), 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
      expectRefusal(
        await http.call('POST', '/organization/remove-member', { memberIdOrEmail: memberIds.get(owner.userId) }, owner.headers),
        'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
      );
      expectRefusal(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: 'nobody@example.com' }, owner.headers), 'MEMBER_NOT_FOUND');
      expectRefusal(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: outsider.email }, owner.headers), 'MEMBER_NOT_FOUND');
      expectRefusal(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: 'no-member' }, owner.headers), 'MEMBER_NOT_FOUND');
      expectRefusal(
        await http.call('POST', '/organization/remove-member', { memberIdOrEmail: memberIds.get(member.userId), organizationId }, outsider.headers),
        'MEMBER_NOT_FOUND',
      );
      expectRefusal(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: member.email }, outsider.headers), 'NO_ACTIVE_ORGANIZATION');
      expectRefusal(await http.call('POST', '/organization/remove-member', { memberIdOrEmail: member.email }), 'UNAUTHORIZED');
      expect(expectOk<MemberPageJson>(await http.call('GET', '/organization/list-members', undefined, owner.headers)).total).toBe(3);
    });
  });

  describe('leave', () => {
    it('lets a member leave, answered with the user; their session stops working in it', async () => {
      const leaver = await http.newUser('leaver');
      const joined = await join(leaver, 'member');
      expect(expectOk(await http.call('POST', '/organization/leave', { organizationId }, leaver.headers))).toEqual({
        ...joined,
        user: { id: leaver.userId, name: leaver.name, email: leaver.email, image: null },
      });
      expect(await http.activeSelection(leaver)).toEqual({ activeOrganizationId: null, activeTeamId: null });
      expectRefusal(await http.call('POST', '/organization/leave', { organizationId }, leaver.headers), 'MEMBER_NOT_FOUND');
    });

    it('refuses the only owner until another owner exists', async () => {
      expectRefusal(await http.call('POST', '/organization/leave', { organizationId }, owner.headers), 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
      const heir = await http.newUser('heir');
      await join(heir, 'owner');
      expectOk(await http.call('POST', '/organization/leave', { organizationId }, owner.headers));
      expectRefusal(await http.call('POST', '/organization/leave', { organizationId }, heir.headers), 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
      expect(expectOk(await http.call('GET', '/organization/get-active-member-role', undefined, heir.headers))).toEqual({ role: 'owner' });
    });

    it('refuses outsiders, anonymous callers and a bad body', async () => {
      expectRefusal(await http.call('POST', '/organization/leave', { organizationId }, outsider.headers), 'MEMBER_NOT_FOUND');
      expectRefusal(await http.call('POST', '/organization/leave', { organizationId: 'no-such-org' }, outsider.headers), 'MEMBER_NOT_FOUND');
      expectRefusal(await http.call('POST', '/organization/leave', {}, outsider.headers), 'VALIDATION_ERROR');
      expectRefusal(await http.call('POST', '/organization/leave', { organizationId }), 'UNAUTHORIZED');
    });
  });
});
