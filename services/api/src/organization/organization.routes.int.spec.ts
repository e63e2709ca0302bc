import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import {
  expectOk,
  expectRefusal,
  organizationApi,
  ORGANIZATION_SPEC_PASSWORD,
  type MemberJson,
  type SignedUpUser,
} from '../../../../tests/support/organization-api.ts';

const API_KEY = 'organization-routes-server-api-key-0123456789';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface OrganizationJson {
  id: string;
  name: string;
  slug: string;
  logo: string | null;
  metadata: Record<string, unknown> | null;
  createdAt: string;
}
interface FullOrganizationJson extends OrganizationJson {
  members: Required<Omit<MemberJson, 'teamId'>>[];
  invitations: { id: string; role: string; email: string }[];
  teams?: { id: string; name: string; organizationId: string }[];
}

const baseEnv = {
  AUTH_SECRET: 'organization-routes-secret-0123456789abcdef',
  BASE_URL: 'http://localhost:3000',
  AUTH_RATE_LIMIT_ENABLED: 'false',
  AUTH_SERVER_API_KEY: API_KEY,
  AUTH_DELETE_USER_ENABLED: 'true',
};

/**
 * The organization endpoints over HTTP (`inject` on real stores, projections in-process): every route's
 * answer and each of its refusals, for owner, admin, member and outsider, with better-auth 1.7's statuses and
 * the spec's messages; the slug under concurrency; a deleted user's memberships.
 */
describe('organization routes (teams on, default team)', () => {
  let api: InProcessApi;
  let http: ReturnType<typeof organizationApi>;
  let owner: SignedUpUser;
  let admin: SignedUpUser;
  let member: SignedUpUser;
  let outsider: SignedUpUser;
  let acme: OrganizationJson;

  /** An organization of `creator`, with the others added by a server call and working in it. */
  async function organizationOf(creator: SignedUpUser, slug: string, others: Array<[SignedUpUser, string]> = []): Promise<OrganizationJson> {
    const { members: _members, ...created } = expectOk<OrganizationJson & { members: MemberJson[] }>(
      await http.call('POST', '/organization/create', { name: slug.toUpperCase(), slug }, creator.headers),
    );
    for (const [user, role] of others) {
      expectOk(await http.call('POST', '/organization/add-member', { userId: user.userId, role, organizationId: created.id }, { 'x-api-key': API_KEY }));
      expectOk(await http.call('POST', '/organization/set-active', { organizationId: created.id }, user.headers));
    }
    return created;
  }

  beforeAll(async () => {
    api = await startInProcessApi('organization_routes', baseEnv);
    http = organizationApi(api);
    owner = await http.newUser('owner');
    admin = await http.newUser('admin');
    member = await http.newUser('member');
    outsider = await http.newUser('outsider');
  });

  afterAll(async () => {
    await api?.close();
  });

  describe('create and check-slug', () => {
    it('creates an organization with its creator as owner, and makes it and its default team active', async () => {
      acme = expectOk<OrganizationJson & { members: MemberJson[] }>(
        await http.call(
          'POST',
          '/organization/create',
          { name: 'Acme', slug: 'acme', logo: 'https://example.com/logo.png', metadata: { plan: 'pro', seats: 5 } },
          owner.headers,
        ),
      );
      expect(acme).toEqual({
        id: expect.any(String),
        name: 'Acme',
        slug: 'acme',
        logo: 'https://example.com/logo.png',
        metadata: { plan: 'pro', seats: 5 },
        createdAt: expect.stringMatching(ISO),
        members: [{ id: expect.any(String), organizationId: expect.any(String), userId: owner.userId, role: 'owner', createdAt: expect.stringMatching(ISO) }],
      });
      const { members, ...organization } = acme as OrganizationJson & { members: MemberJson[] };
      acme = organization;
      expect(members[0]!.organizationId).toBe(acme.id);

      const full = expectOk<FullOrganizationJson>(await http.call('GET', '/organization/get-full-organization', undefined, owner.headers));
      expect(full.teams).toEqual([expect.objectContaining({ name: 'Acme', organizationId: acme.id })]);
      expect(await http.activeSelection(owner)).toEqual({ activeOrganizationId: acme.id, activeTeamId: full.teams![0]!.id });
      expect(expectOk(await http.call('GET', '/organization/list', undefined, owner.headers))).toEqual([acme]);
      expect(await count(api, sql.unsafe`SELECT count(*) FROM events WHERE stream_id = 'organization-slug-acme' AND type = 'organization.slug_reserved.v1'`)).toBe(1);

      for (const [user, role] of [
        [admin, 'admin'],
        [member, 'member'],
      ] as const) {
        expectOk(await http.call('POST', '/organization/add-member', { userId: user.userId, role, organizationId: acme.id }, { 'x-api-key': API_KEY }));
        expectOk(await http.call('POST', '/organization/set-active', { organizationId: acme.id }, user.headers));
      }
    });

    it('keeps the session on its organization when asked, and answers a bare organization with null logo and metadata', async () => {
      const kept = expectOk<OrganizationJson>(
        await http.call('POST', '/organization/create', { name: 'Side', slug: 'side', keepCurrentActiveOrganization: true }, owner.headers),
      );
      expect(kept).toMatchObject({ name: 'Side', slug: 'side', logo: null, metadata: null });
      expect((await http.activeSelection(owner)).activeOrganizationId).toBe(acme.id);
      expect((expectOk<OrganizationJson[]>(await http.call('GET', '/organization/list', undefined, owner.headers))).map((o) => o.slug)).toEqual(['acme', 'side']);
    });

    it('refuses anonymous callers, a taken slug and a bad body', async () => {
      expectRefusal(await http.call('POST', '/organization/create', { name: 'Anon', slug: 'anon' }), 'UNAUTHORIZED');
      expectRefusal(await http.call('POST', '/organization/create', { name: 'Anon', slug: 'anon' }, { 'x-api-key': 'wrong' }), 'UNAUTHORIZED');
      expectRefusal(await http.call('POST', '/organization/create', { name: 'Again', slug: 'acme' }, member.headers), 'ORGANIZATION_ALREADY_EXISTS');
      expectRefusal(await http.call('POST', '/organization/create', { name: '', slug: 'empty' }, member.headers), 'VALIDATION_ERROR');
      expectRefusal(await http.call('POST', '/organization/create', { name: 'No slug' }, member.headers), 'VALIDATION_ERROR');
    });

    it('creates for the user a server call names, without touching any session; a client cannot name another user', async () => {
      const forOutsider = expectOk<OrganizationJson & { members: MemberJson[] }>(
        await http.call('POST', '/organization/create', { name: 'Given', slug: 'given', userId: outsider.userId }, { 'x-api-key': API_KEY }),
      );
      expect(forOutsider.members).toEqual([expect.objectContaining({ userId: outsider.userId, role: 'owner' })]);
      expect(await http.activeSelection(outsider)).toEqual({ activeOrganizationId: null, activeTeamId: null });
      expectRefusal(
        await http.call('POST', '/organization/create', { name: 'Ghost', slug: 'ghost', userId: 'no-such-user' }, { 'x-api-key': API_KEY }),
        'UNAUTHORIZED',
      );

      const own = expectOk<{ members: MemberJson[] }>(
        await http.call('POST', '/organization/create', { name: 'Mine', slug: 'mine', userId: outsider.userId, keepCurrentActiveOrganization: true }, member.headers),
      );
      expect(own.members).toEqual([expect.objectContaining({ userId: member.userId })]);
    });

    it('checks a slug: free is status true, taken is the spec\'s "slug is taken"', async () => {
      expect(expectOk(await http.call('POST', '/organization/check-slug', { slug: 'free-one' }, outsider.headers))).toEqual({ status: true });
      expectRefusal(await http.call('POST', '/organization/check-slug', { slug: 'acme' }, outsider.headers), 'ORGANIZATION_SLUG_ALREADY_TAKEN');
      expectRefusal(await http.call('POST', '/organization/check-slug', { slug: 'acme' }), 'UNAUTHORIZED');
      expectRefusal(await http.call('POST', '/organization/check-slug', { slug: 'acme' }, { 'x-api-key': API_KEY }), 'ORGANIZATION_SLUG_ALREADY_TAKEN');
      expectRefusal(await http.call('POST', '/organization/check-slug', {}, outsider.headers), 'VALIDATION_ERROR');
    });

    it('gives one slug to exactly one of many parallel creates', async () => {
      const racers = await Promise.all(Array.from({ length: 8 }, (_, i) => http.newUser(`racer${i}`)));
      const answers = await Promise.all(racers.map((racer) => http.call('POST', '/organization/create', { name: 'Race', slug: 'race' }, racer.headers)));
      const won = answers.filter((a) => a.status === 200);
      expect(won).toHaveLength(1);
      for (const lost of answers.filter((a) => a.status !== 200)) expectRefusal(lost, 'ORGANIZATION_ALREADY_EXISTS');
      expect(await count(api, sql.unsafe`SELECT count(*) FROM organization WHERE slug = 'race'`)).toBe(1);
      // No organization stream was written for a loser: the slug and the organization land together or not at all.
      expect(await count(api, sql.unsafe`SELECT count(*) FROM events WHERE type = 'organization.created.v1' AND data->>'slug' = 'race'`)).toBe(1);
      const winner = won[0]!.json as { id: string };
      expect(await count(api, sql.unsafe`SELECT count(*) FROM member WHERE "organizationId" = ${winner.id}`)).toBe(1);
    });
  });

  describe('update', () => {
    it('lets the owner update the active organization, replacing the metadata', async () => {
      const updated = expectOk<OrganizationJson>(
        await http.call('POST', '/organization/update', { data: { name: 'Acme Inc', metadata: { plan: 'team' } } }, owner.headers),
      );
      expect(updated).toEqual({ ...acme, name: 'Acme Inc', metadata: { plan: 'team' } });
      acme = updated;
    });

    it('lets an admin move the slug: the old one is free, the new one taken', async () => {
      const moved = expectOk<OrganizationJson>(
        await http.call('POST', '/organization/update', { organizationId: acme.id, data: { slug: 'acme-inc', logo: null } }, admin.headers),
      );
      expect(moved).toEqual({ ...acme, slug: 'acme-inc', logo: null });
      acme = moved;
      expect(expectOk(await http.call('POST', '/organization/check-slug', { slug: 'acme' }, owner.headers))).toEqual({ status: true });
      expectRefusal(await http.call('POST', '/organization/check-slug', { slug: 'acme-inc' }, owner.headers), 'ORGANIZATION_SLUG_ALREADY_TAKEN');
      expect(expectOk(await http.call('GET', '/organization/get-organization?organizationSlug=acme-inc', undefined, member.headers))).toEqual(acme);
      // Keeping its own slug is no conflict.
      expect(expectOk(await http.call('POST', '/organization/update', { data: { slug: 'acme-inc' } }, owner.headers))).toEqual(acme);
    });

    it('refuses members, outsiders, a slug another organization holds and a missing organization', async () => {
      expectRefusal(await http.call('POST', '/organization/update', { data: { name: 'Mine' } }, member.headers), 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION');
      expectRefusal(
        await http.call('POST', '/organization/update', { organizationId: acme.id, data: { name: 'Ours' } }, outsider.headers),
        'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
      );
      // better-auth's message on update; check-slug keeps the spec's 'slug is taken'.
      expectRefusal(await http.call('POST', '/organization/update', { data: { slug: 'side' } }, owner.headers), 'ORGANIZATION_SLUG_TAKEN_ON_UPDATE');
      expectRefusal(await http.call('POST', '/organization/update', { data: { name: 'X' } }, outsider.headers), 'ORGANIZATION_NOT_FOUND');
      expectRefusal(await http.call('POST', '/organization/update', { data: { name: 'X' } }), 'UNAUTHORIZED');
      expectRefusal(await http.call('POST', '/organization/update', { data: { name: '' } }, owner.headers), 'VALIDATION_ERROR');
      expect(expectOk(await http.call('GET', '/organization/get-organization', undefined, owner.headers))).toEqual(acme);
    });
  });

  describe('set-active, get-organization, get-full-organization, list', () => {
    it('sets the active organization by id or slug, clears it with null, and answers null without one', async () => {
      const side = (expectOk<OrganizationJson[]>(await http.call('GET', '/organization/list', undefined, owner.headers))).find((o) => o.slug === 'side')!;
      expect(expectOk(await http.call('POST', '/organization/set-active', { organizationSlug: 'side' }, owner.headers))).toEqual(side);
      expect(await http.activeSelection(owner)).toEqual({ activeOrganizationId: side.id, activeTeamId: null });
      expect(expectOk(await http.call('POST', '/organization/set-active', {}, owner.headers))).toEqual(side);
      expect(expectOk(await http.call('POST', '/organization/set-active', { organizationId: null }, owner.headers))).toBeNull();
      expect(await http.activeSelection(owner)).toEqual({ activeOrganizationId: null, activeTeamId: null });
      expect(expectOk(await http.call('POST', '/organization/set-active', {}, owner.headers))).toBeNull();
      expect(expectOk(await http.call('GET', '/organization/get-organization', undefined, owner.headers))).toBeNull();
      expect(expectOk(await http.call('GET', '/organization/get-full-organization', undefined, owner.headers))).toBeNull();
      expect(expectOk(await http.call('POST', '/organization/set-active', { organizationId: acme.id }, owner.headers))).toEqual(acme);
      expect((await http.activeSelection(owner)).activeOrganizationId).toBe(acme.id);
    });

    it('refuses a non-member with 403 and clears the organization it had active', async () => {
      const own = expectOk<OrganizationJson>(await http.call('POST', '/organization/create', { name: 'Outpost', slug: 'outpost' }, outsider.headers));
      expect((await http.activeSelection(outsider)).activeOrganizationId).toBe(own.id);
      expectRefusal(
        await http.call('POST', '/organization/set-active', { organizationId: acme.id }, outsider.headers),
        'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
        403,
      );
      expect(await http.activeSelection(outsider)).toEqual({ activeOrganizationId: null, activeTeamId: null });
      expectRefusal(await http.call('POST', '/organization/set-active', { organizationSlug: 'no-such-slug' }, outsider.headers), 'ORGANIZATION_NOT_FOUND');
      expectRefusal(
        await http.call('GET', `/organization/get-organization?organizationId=${acme.id}`, undefined, outsider.headers),
        'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
        403,
      );
      expectRefusal(
        await http.call('GET', '/organization/get-full-organization?organizationSlug=acme-inc', undefined, outsider.headers),
        'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
        403,
      );
      expectRefusal(await http.call('GET', '/organization/get-organization?organizationId=no-such-id', undefined, outsider.headers), 'ORGANIZATION_NOT_FOUND');
      expectRefusal(await http.call('GET', '/organization/get-full-organization?organizationSlug=nope', undefined, outsider.headers), 'ORGANIZATION_NOT_FOUND');
      expectRefusal(await http.call('GET', '/organization/list'), 'UNAUTHORIZED');
      expectOk(await http.call('POST', '/organization/set-active', { organizationId: own.id }, outsider.headers));
    });

    it('shows the full organization: members with their users, teams, and invitations only to those who may invite', async () => {
      expectOk(await http.call('POST', '/organization/invite-member', { email: 'new-admin@example.com', role: 'admin' }, owner.headers));
      expectOk(await http.call('POST', '/organization/invite-member', { email: 'new-owner@example.com', role: 'owner' }, owner.headers));

      const full = expectOk<FullOrganizationJson>(await http.call('GET', '/organization/get-full-organization', undefined, owner.headers));
      expect({ ...full, members: undefined, invitations: undefined, teams: undefined }).toEqual({ ...acme, members: undefined, invitations: undefined, teams: undefined });
      expect(full.members.map((m) => [m.user.email, m.role])).toEqual([
        [owner.email, 'owner'],
        [admin.email, 'admin'],
        [member.email, 'member'],
      ]);
      expect(full.members[0]).toEqual({
        id: expect.any(String),
        organizationId: acme.id,
        userId: owner.userId,
        role: 'owner',
        createdAt: expect.stringMatching(ISO),
        user: { id: owner.userId, name: owner.name, email: owner.email, image: null },
      });
      expect(full.teams?.map((t) => t.name)).toEqual(['Acme']);
      expect(full.invitations.map((i) => i.email).sort()).toEqual(['new-admin@example.com', 'new-owner@example.com']);

      const byAdmin = expectOk<FullOrganizationJson>(await http.call('GET', `/organization/get-full-organization?organizationId=${acme.id}`, undefined, admin.headers));
      expect(byAdmin.invitations.map((i) => i.email)).toEqual(['new-admin@example.com']);
      const byMember = expectOk<FullOrganizationJson>(await http.call('GET', '/organization/get-full-organization?organizationSlug=acme-inc', undefined, member.headers));
      expect(byMember.invitations).toEqual([]);
      expect(byMember.members).toHaveLength(3);
      const limited = expectOk<FullOrganizationJson>(await http.call('GET', '/organization/get-full-organization?membersLimit=1', undefined, member.headers));
      expect(limited.members.map((m) => m.userId)).toEqual([owner.userId]);
      expectRefusal(await http.call('GET', '/organization/get-full-organization?membersLimit=zero', undefined, member.headers), 'INVALID_QUERY_PARAMETERS');
    });
  });

  describe('has-permission', () => {
    const check = async (user: SignedUpUser, body: unknown): Promise<unknown> => expectOk(await http.call('POST', '/organization/has-permission', body, user.headers));

    it('answers the permission table for each role of the active organization', async () => {
      expect(await check(owner, { permissions: { organization: ['delete'] } })).toEqual({ error: null, success: true });
      expect(await check(admin, { permissions: { organization: ['delete'] } })).toEqual({ error: null, success: false });
      expect(await check(admin, { permissions: { organization: ['update'], member: ['create', 'delete'] } })).toEqual({ error: null, success: true });
      expect(await check(member, { permissions: { member: ['create'] } })).toEqual({ error: null, success: false });
      expect(await check(member, { permissions: { ac: ['read'] } })).toEqual({ error: null, success: true });
      expect(await check(member, { organizationId: acme.id, permission: { invitation: ['cancel'] } })).toEqual({ error: null, success: false });
      expect(await check(admin, { permission: { invitation: ['cancel'] } })).toEqual({ error: null, success: true });
      expect(await check(owner, { permissions: { billing: ['read'] } })).toEqual({ error: null, success: false });
    });

    it('refuses without an organization, for a non-member and for a bad body', async () => {
      const loner = await http.newUser('loner');
      expectRefusal(await http.call('POST', '/organization/has-permission', { permissions: { member: ['create'] } }, loner.headers), 'NO_ACTIVE_ORGANIZATION');
      expectRefusal(
        await http.call('POST', '/organization/has-permission', { organizationId: acme.id, permissions: { member: ['create'] } }, loner.headers),
        'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
        401,
      );
      expectRefusal(await http.call('POST', '/organization/has-permission', {}, owner.headers), 'VALIDATION_ERROR');
      expectRefusal(
        await http.call('POST', '/organization/has-permission', { permissions: { member: ['create'] }, permission: { member: ['create'] } }, owner.headers),
        'VALIDATION_ERROR',
      );
      expectRefusal(await http.call('POST', '/organization/has-permission', { permissions: { member: ['create'] } }), 'UNAUTHORIZED');
    });
  });

  describe('delete', () => {
    it('lets only the owner delete; everything of the organization goes, its slug is free and no session keeps it active', async () => {
      const doomed = await organizationOf(owner, 'doomed', [
        [admin, 'admin'],
        [member, 'member'],
      ]);
      expectOk(await http.call('POST', '/organization/invite-member', { email: 'late@example.com', role: 'member' }, owner.headers));
      expectOk(await http.call('POST', '/organization/create-team', { name: 'Extra' }, owner.headers));

      expectRefusal(await http.call('POST', '/organization/delete', { organizationId: doomed.id }, admin.headers), 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION');
      expectRefusal(await http.call('POST', '/organization/delete', { organizationId: doomed.id }, member.headers), 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION');
      expectRefusal(await http.call('POST', '/organization/delete', { organizationId: doomed.id }, outsider.headers), 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
      expectRefusal(await http.call('POST', '/organization/delete', { organizationId: doomed.id }), 'UNAUTHORIZED');
      expectRefusal(await http.call('POST', '/organization/delete', {}, owner.headers), 'VALIDATION_ERROR');

      expect(expectOk(await http.call('POST', '/organization/delete', { organizationId: doomed.id }, owner.headers))).toEqual(doomed);
      expect(await http.activeSelection(owner)).toEqual({ activeOrganizationId: null, activeTeamId: null });
      // The others' sessions are cleared by the read model (the organization's deletion names its members).
      expect((await http.activeSelection(admin)).activeOrganizationId).toBeNull();
      expect((await http.activeSelection(member)).activeOrganizationId).toBeNull();
      for (const table of ['member', 'invitation', 'team']) {
        expect(await count(api, sql.unsafe`SELECT count(*) FROM ${sql.identifier([table])} WHERE "organizationId" = ${doomed.id}`), table).toBe(0);
      }
      expect(await count(api, sql.unsafe`SELECT count(*) FROM organization WHERE id = ${doomed.id}`)).toBe(0);
      expect(await count(api, sql.unsafe`SELECT count(*) FROM "teamMember" WHERE "teamId" NOT IN (SELECT id FROM team)`)).toBe(0);
      expectRefusal(await http.call('POST', '/organization/delete', { organizationId: doomed.id }, owner.headers), 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
      expect(expectOk(await http.call('POST', '/organization/check-slug', { slug: 'doomed' }, owner.headers))).toEqual({ status: true });
      expectOk(await http.call('POST', '/organization/create', { name: 'Reborn', slug: 'doomed', keepCurrentActiveOrganization: true }, member.headers));

      for (const user of [owner, admin, member]) expectOk(await http.call('POST', '/organization/set-active', { organizationId: acme.id }, user.headers));
    });
  });

  describe('deleting a user', () => {
    it('removes the user from every organization on its stream, leaving no member row behind', async () => {
      const leaving = await http.newUser('leaving');
      expectOk(await http.call('POST', '/organization/add-member', { userId: leaving.userId, role: 'admin', organizationId: acme.id }, { 'x-api-key': API_KEY }));
      const own = expectOk<OrganizationJson>(await http.call('POST', '/organization/create', { name: 'Solo', slug: 'solo' }, leaving.headers));
      const before = expectOk<{ total: number }>(await http.call('GET', '/organization/list-members', undefined, owner.headers)).total;

      expectOk(await http.call('POST', '/delete-user', { password: ORGANIZATION_SPEC_PASSWORD }, leaving.headers));

      expect(await count(api, sql.unsafe`SELECT count(*) FROM member WHERE "userId" = ${leaving.userId}`)).toBe(0);
      expect(await count(api, sql.unsafe`SELECT count(*) FROM "teamMember" WHERE "userId" = ${leaving.userId}`)).toBe(0);
      expect(expectOk<{ total: number }>(await http.call('GET', '/organization/list-members', undefined, owner.headers)).total).toBe(before - 1);
      const removals = (await api.db.pool.any(sql.unsafe`
        SELECT stream_id, data->>'reason' AS reason FROM events
        WHERE type = 'organization.member_removed.v1' AND data->>'userId' = ${leaving.userId} ORDER BY stream_id`)) as readonly {
        stream_id: string;
        reason: string;
      }[];
      expect(removals.map((r) => [r.stream_id, r.reason]).sort()).toEqual(
        [
          [`organization-${acme.id}`, 'user_deleted'],
          [`organization-${own.id}`, 'user_deleted'],
        ].sort(),
      );
      // The organization's own count no longer holds the user: adding someone still fits as before.
      const next = await http.newUser('next');
      expectOk(await http.call('POST', '/organization/add-member', { userId: next.userId, role: 'member', organizationId: acme.id }, { 'x-api-key': API_KEY }));
    });
  });
});

/** Creation limited per user, deletion switched off, teams off. */
describe('organization routes (organization limit 2, deletion disabled, teams off)', () => {
  let api: InProcessApi;
  let http: ReturnType<typeof organizationApi>;

  beforeAll(async () => {
    api = await startInProcessApi('organization_routes_limits', {
      ...baseEnv,
      AUTH_ORGANIZATION_LIMIT: '2',
      AUTH_ORGANIZATION_DISABLE_DELETION: 'true',
      AUTH_ORGANIZATION_TEAMS_ENABLED: 'false',
    });
    http = organizationApi(api);
  });

  afterAll(async () => {
    await api?.close();
  });

  it('refuses a user at the organization limit, counting every membership', async () => {
    const user = await http.newUser('limited');
    const first = expectOk<OrganizationJson>(await http.call('POST', '/organization/create', { name: 'One', slug: 'one' }, user.headers));
    expect(await http.activeSelection(user)).toEqual({ activeOrganizationId: first.id, activeTeamId: null });
    const other = await http.newUser('other');
    const theirs = expectOk<OrganizationJson>(await http.call('POST', '/organization/create', { name: 'Theirs', slug: 'theirs' }, other.headers));
    expectOk(await http.call('POST', '/organization/add-member', { userId: user.userId, role: 'member', organizationId: theirs.id }, { 'x-api-key': API_KEY }));

    expectRefusal(await http.call('POST', '/organization/create', { name: 'Three', slug: 'three' }, user.headers), 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS');
    expectRefusal(
      await http.call('POST', '/organization/create', { name: 'Three', slug: 'three', userId: user.userId }, { 'x-api-key': API_KEY }),
      'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS',
    );
    expectOk(await http.call('POST', '/organization/leave', { organizationId: theirs.id }, user.headers));
    expectOk(await http.call('POST', '/organization/create', { name: 'Three', slug: 'three' }, user.headers));
  });

  it('lets exactly as many of many parallel creates through as the limit allows, counting on the log', async () => {
    const user = await http.newUser('racing-creator');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => http.call('POST', '/organization/create', { name: `Race ${i}`, slug: `race-${user.userId}-${i}` }, user.headers)),
    );
    const created = answers.filter((a) => a.status === 200);
    expect(created).toHaveLength(2);
    for (const refused of answers.filter((a) => a.status !== 200)) expectRefusal(refused, 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS');
    expect(await count(api, sql.unsafe`SELECT count(*) FROM member WHERE "userId" = ${user.userId}`)).toBe(2);
  });

  it('answers without teams and makes no default team', async () => {
    const user = await http.newUser('teamless');
    const created = expectOk<OrganizationJson>(await http.call('POST', '/organization/create', { name: 'Flat', slug: 'flat' }, user.headers));
    const full = expectOk<FullOrganizationJson>(await http.call('GET', '/organization/get-full-organization', undefined, user.headers));
    expect(full).not.toHaveProperty('teams');
    expect(await count(api, sql.unsafe`SELECT count(*) FROM team WHERE "organizationId" = ${created.id}`)).toBe(0);
  });

  it('refuses every deletion as a route that is switched off', async () => {
    const user = await http.newUser('keeper');
    const { members: _members, ...created } = expectOk<OrganizationJson & { members: MemberJson[] }>(
      await http.call('POST', '/organization/create', { name: 'Kept', slug: 'kept' }, user.headers),
    );
    expectRefusal(await http.call('POST', '/organization/delete', { organizationId: created.id }, user.headers), 'ORGANIZATION_DELETION_DISABLED');
    expectRefusal(await http.call('POST', '/organization/delete', { organizationId: created.id }), 'ORGANIZATION_DELETION_DISABLED');
    expect(expectOk(await http.call('GET', '/organization/get-organization', undefined, user.headers))).toEqual(created);
  });
});

/** Creation switched off: only a server call creates, for a user it names. */
describe('organization routes (creation switched off)', () => {
  let api: InProcessApi;
  let http: ReturnType<typeof organizationApi>;

  beforeAll(async () => {
    api = await startInProcessApi('organization_routes_no_create', { ...baseEnv, AUTH_ORGANIZATION_ALLOW_CREATE: 'false' });
    http = organizationApi(api);
  });

  afterAll(async () => {
    await api?.close();
  });

  it('refuses users and lets a server call create for one', async () => {
    const user = await http.newUser('wishful');
    expectRefusal(await http.call('POST', '/organization/create', { name: 'Wish', slug: 'wish' }, user.headers), 'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION');
    const created = expectOk<{ members: MemberJson[] }>(
      await http.call('POST', '/organization/create', { name: 'Granted', slug: 'granted', userId: user.userId }, { 'x-api-key': API_KEY }),
    );
    expect(created.members).toEqual([expect.objectContaining({ userId: user.userId, role: 'owner' })]);
    expect((expectOk<OrganizationJson[]>(await http.call('GET', '/organization/list', undefined, user.headers))).map((o) => o.slug)).toEqual(['granted']);
  });
});

async function count(api: InProcessApi, query: ReturnType<typeof sql.unsafe>): Promise<number> {
  return Number(await api.db.pool.oneFirst(query));
}
