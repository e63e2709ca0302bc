import { createAuthClient } from 'better-auth/client';
import { organizationClient } from 'better-auth/client/plugins';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import { cookieJarFetch } from '../support/better-auth-fetch.ts';
import { DEFAULT_PASSWORD, expectCatalogueError, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { describeWithRedis } from '../support/redis.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient } from '../support/system.ts';

interface OrganizationJson {
  id: string;
  name: string;
  slug: string;
  metadata: Record<string, unknown> | null;
  members?: MemberJson[];
}
interface MemberJson {
  id: string;
  userId: string;
  organizationId: string;
  role: string;
  user?: { id: string; email: string; name: string };
}
interface InvitationJson {
  id: string;
  email: string;
  role: string;
  status: string;
  organizationId: string;
  expiresAt: string;
}
interface TeamJson {
  id: string;
  name: string;
  organizationId: string;
}
type Session = SessionAnswerJson & { session: { activeOrganizationId: string | null; activeTeamId: string | null } };

/**
 * Organizations end to end: api, projector and mailer as real processes, invitation mail over real SMTP,
 * each invitation accepted from the link its mail carries, for an owner, an admin and a member; then
 * better-auth's own organizationClient as a black box.
 */
function organizationSuite(redis: boolean) {
  let system: MailSystem;

  beforeAll(async () => {
    system = await startMailSystem({ redis, env: { AUTH_ORGANIZATION_INVITATION_EXPIRES_IN: '3600' } });
  });

  afterAll(async () => {
    await system?.stop();
  });

  async function newUser(label: string): Promise<{ browser: HttpClient; email: string; userId: string }> {
    const browser = new HttpClient(system.authUrl);
    const email = uniqueEmail(label);
    const signedUp = await browser.post<{ user: { id: string } }>('sign-up/email', { name: label, email, password: DEFAULT_PASSWORD });
    expect(signedUp.status, signedUp.text).toBe(200);
    return { browser, email, userId: signedUp.json.user.id };
  }

  async function session(browser: HttpClient): Promise<Session['session']> {
    const answer = await browser.get<Session>('get-session');
    expect(answer.status).toBe(200);
    return answer.json.session;
  }

  /** The invitation id the mailed link carries, after the mail arrived over SMTP. */
  async function mailedInvitationId(email: string, count = 1): Promise<string> {
    const mail = await system.smtp!.waitForMail(email, { count });
    const link = linkIn(mail);
    expect(link.startsWith(`${system.baseUrl}/accept-invitation/`)).toBe(true);
    return decodeURIComponent(link.slice(`${system.baseUrl}/accept-invitation/`.length));
  }

  it('walks create, invite by mail, accept from the link, roles, teams, leave and delete', async () => {
    const owner = await newUser('owner');
    const slug = `acme-${Date.now()}`;

    expect((await owner.browser.post('organization/check-slug', { slug })).json).toEqual({ status: true });
    const created = await owner.browser.post<OrganizationJson>('organization/create', {
      name: 'Acme',
      slug,
      metadata: { plan: 'pro', seats: 5 },
    });
    expect(created.status, created.text).toBe(200);
    const org = created.json;
    expect(org).toMatchObject({ name: 'Acme', slug, metadata: { plan: 'pro', seats: 5 } });
    expect(org.members).toEqual([expect.objectContaining({ userId: owner.userId, role: 'owner', organizationId: org.id })]);
    expect((await session(owner.browser)).activeOrganizationId).toBe(org.id);
    expectCatalogueError(await owner.browser.post('organization/check-slug', { slug }), 'ORGANIZATION_SLUG_ALREADY_TAKEN');

    // Invitations by mail, each accepted from its link by the invited address's own account.
    const adminEmail = uniqueEmail('admin');
    const memberEmail = uniqueEmail('member');
    const invitedAdmin = await owner.browser.post<InvitationJson>('organization/invite-member', { email: adminEmail.toUpperCase(), role: 'admin' });
    expect(invitedAdmin.status, invitedAdmin.text).toBe(200);
    expect(invitedAdmin.json).toMatchObject({ email: adminEmail, role: 'admin', status: 'pending', organizationId: org.id });
    const invitedMember = await owner.browser.post<InvitationJson>('organization/invite-member', { email: memberEmail, role: 'member' });
    expect(invitedMember.status, invitedMember.text).toBe(200);

    const adminInvitationId = await mailedInvitationId(adminEmail);
    expect(adminInvitationId).toBe(invitedAdmin.json.id);
    const adminMail = await system.smtp!.waitForMail(adminEmail);
    expect(adminMail.text).toContain('Acme');

    // Inviting a pending address again is refused unless asked to resend: the mail goes again, same invitation.
    const refused = await owner.browser.post('organization/invite-member', { email: memberEmail, role: 'member' });
    expectCatalogueError(refused, 'USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION');
    const reinvited = await owner.browser.post<InvitationJson>('organization/invite-member', { email: memberEmail, role: 'member', resend: true });
    expect(reinvited.status, reinvited.text).toBe(200);
    expect(reinvited.json.id).toBe(invitedMember.json.id);
    expect(await mailedInvitationId(memberEmail, 2)).toBe(invitedMember.json.id);
    const pending = await owner.browser.get<InvitationJson[]>(`organization/list-invitations?organizationId=${org.id}`);
    expect(pending.json.filter((i) => i.email === memberEmail)).toHaveLength(1);

    // The wrong account cannot take an invitation; the right one can, case-insensitively.
    const stranger = await newUser('stranger');
    expectCatalogueError(
      await stranger.browser.post('organization/accept-invitation', { invitationId: adminInvitationId }),
      'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION',
    );
    const admin = new HttpClient(system.authUrl);
    const adminUp = await admin.post<{ user: { id: string } }>('sign-up/email', { name: 'Ada', email: adminEmail, password: DEFAULT_PASSWORD });
    expect(adminUp.status).toBe(200);
    const fetched = await admin.get<InvitationJson & { organizationName: string; inviterEmail: string }>(
      `organization/get-invitation?id=${encodeURIComponent(adminInvitationId)}`,
    );
    expect(fetched.json).toMatchObject({ organizationName: 'Acme', organizationSlug: slug, inviterEmail: owner.email, status: 'pending' });
    const accepted = await admin.post<{ invitation: InvitationJson; member: MemberJson }>('organization/accept-invitation', {
      invitationId: adminInvitationId,
    });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.json.invitation.status).toBe('accepted');
    expect(accepted.json.member).toMatchObject({ userId: adminUp.json.user.id, role: 'admin', organizationId: org.id });
    expect((await session(admin)).activeOrganizationId).toBe(org.id);
    expectCatalogueError(await admin.post('organization/accept-invitation', { invitationId: adminInvitationId }), 'INVITATION_NOT_FOUND');

    const member = new HttpClient(system.authUrl);
    expect((await member.post('sign-up/email', { name: 'Mo', email: memberEmail, password: DEFAULT_PASSWORD })).status).toBe(200);
    const memberAccepted = await member.post<{ member: MemberJson }>('organization/accept-invitation', {
      invitationId: await mailedInvitationId(memberEmail, 2),
    });
    expect(memberAccepted.status, memberAccepted.text).toBe(200);
    const memberId = memberAccepted.json.member.id;

    // What each role may do: the permission table of spec section 6, over HTTP.
    const listed = await member.get<{ members: MemberJson[]; total: number }>('organization/list-members');
    expect(listed.json.total).toBe(3);
    expectCatalogueError(
      await member.post('organization/invite-member', { email: uniqueEmail('nope'), role: 'member' }),
      'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION',
    );
    expectCatalogueError(await member.post('organization/update', { data: { name: 'Mine' } }), 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION');
    expectCatalogueError(await admin.post('organization/delete', { organizationId: org.id }), 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION');
    expect((await admin.post<OrganizationJson>('organization/update', { data: { name: 'Acme Inc' } })).json.name).toBe('Acme Inc');
    expect(
      (await member.post<{ success: boolean }>('organization/has-permission', { permissions: { member: ['create'] } })).json.success,
    ).toBe(false);
    expect((await admin.post<{ success: boolean }>('organization/has-permission', { permissions: { member: ['create'] } })).json.success).toBe(
      true,
    );

    // Role changes: an admin may not make an owner; the owner may.
    expectCatalogueError(
      await admin.post('organization/update-member-role', { memberId, role: 'owner' }),
      'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER',
    );
    const promoted = await owner.browser.post<MemberJson>('organization/update-member-role', { memberId, role: ['member', 'admin'] });
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.json.role).toBe('member,admin');
    expect((await member.get<{ role: string }>('organization/get-active-member-role')).json.role).toBe('member,admin');

    // Team work.
    const team = await member.post<TeamJson>('organization/create-team', { name: 'Platform' });
    expect(team.status, team.text).toBe(200);
    const added = await member.post('organization/add-team-member', { teamId: team.json.id, userId: adminUp.json.user.id });
    expect(added.status, added.text).toBe(200);
    const activeTeam = await admin.post<TeamJson>('organization/set-active-team', { teamId: team.json.id });
    expect(activeTeam.status, activeTeam.text).toBe(200);
    expect((await session(admin)).activeTeamId).toBe(team.json.id);
    const teamMembers = await admin.get<{ userId: string }[]>(`organization/list-team-members?teamId=${team.json.id}`);
    expect(teamMembers.json.map((m) => m.userId)).toEqual([adminUp.json.user.id]);
    const renamed = await member.post<TeamJson>('organization/update-team', { teamId: team.json.id, data: { name: 'Platform Eng' } });
    expect(renamed.json.name).toBe('Platform Eng');
    expect((await member.post('organization/remove-team', { teamId: team.json.id })).json).toEqual({ message: 'Team removed successfully.' });
    expect((await session(admin)).activeTeamId).toBeNull();

    // The last owner can neither leave nor be removed; after handing over ownership they can leave.
    const ownerMember = (await owner.browser.get<MemberJson>('organization/get-active-member')).json;
    expectCatalogueError(
      await owner.browser.post('organization/leave', { organizationId: org.id }),
      'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
    );
    expectCatalogueError(
      await admin.post('organization/remove-member', { memberIdOrEmail: owner.email }),
      'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
    );
    const handedOver = await owner.browser.post('organization/update-member-role', { memberId: accepted.json.member.id, role: 'owner' });
    expect(handedOver.status, handedOver.text).toBe(200);
    const left = await owner.browser.post<MemberJson>('organization/leave', { organizationId: org.id });
    expect(left.status, left.text).toBe(200);
    expect(left.json.id).toBe(ownerMember.id);
    expect((await session(owner.browser)).activeOrganizationId).toBeNull();

    // Removal by email clears the removed member's active organization on their session too.
    const removed = await admin.post<{ member: MemberJson }>('organization/remove-member', { memberIdOrEmail: memberEmail });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.json.member.id).toBe(memberId);
    expect((await session(member)).activeOrganizationId).toBeNull();
    expect((await member.get<unknown[]>('organization/list')).json).toEqual([]);

    // Deleting the organization leaves nothing behind in any read model.
    const deleted = await admin.post<OrganizationJson>('organization/delete', { organizationId: org.id });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await session(admin)).activeOrganizationId).toBeNull();
    for (const table of ['member', 'invitation', 'team']) {
      expect(await system.query(`SELECT id FROM "${table}" WHERE "organizationId" = $1`, [org.id])).toEqual([]);
    }
    expect(await system.query(`SELECT id FROM organization WHERE id = $1`, [org.id])).toEqual([]);
    expect((await session(admin)).activeOrganizationId).toBeNull();
    // The slug is free again.
    expect((await owner.browser.post('organization/check-slug', { slug })).json).toEqual({ status: true });
  });

  it('serves better-auth organizationClient as a black box', async () => {
    const { fetchOptions } = cookieJarFetch(system);
    const client = createAuthClient({
      baseURL: system.baseUrl,
      plugins: [organizationClient({ teams: { enabled: true } })],
      fetchOptions,
    });
    const email = uniqueEmail('org-client');
    expect((await client.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Client Owner' })).error).toBeNull();

    const slug = `client-${Date.now()}`;
    const created = await client.organization.create({ name: 'Client Org', slug, metadata: { tier: 'gold' } });
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({ name: 'Client Org', slug, metadata: { tier: 'gold' } });
    expect(created.data?.createdAt).toBeInstanceOf(Date);
    const organizationId = created.data!.id;

    const full = await client.organization.getFullOrganization();
    expect(full.error).toBeNull();
    expect(full.data?.id).toBe(organizationId);
    expect(full.data?.members.map((m) => m.role)).toEqual(['owner']);

    const organizations = await client.organization.list();
    expect(organizations.data?.map((o) => o.id)).toEqual([organizationId]);

    const invited = await client.organization.inviteMember({ email: uniqueEmail('client-invitee'), role: 'member' });
    expect(invited.error).toBeNull();
    expect(invited.data?.status).toBe('pending');
    expect(invited.data?.expiresAt).toBeInstanceOf(Date);
    const invitations = await client.organization.listInvitations({ query: { organizationId } });
    expect(invitations.data?.map((i) => i.id)).toEqual([invited.data!.id]);
    const canceled = await client.organization.cancelInvitation({ invitationId: invited.data!.id });
    expect(canceled.error).toBeNull();
    expect(canceled.data?.status).toBe('canceled');

    const team = await client.organization.createTeam({ name: 'Core' });
    expect(team.error).toBeNull();
    const teams = await client.organization.listTeams();
    expect(teams.data?.map((t) => t.name)).toContain('Core');

    const allowed = await client.organization.hasPermission({ permissions: { organization: ['delete'] } });
    expect(allowed.data).toMatchObject({ success: true });

    const duplicate = await client.organization.create({ name: 'Again', slug });
    expect(duplicate.error?.status).toBe(400);
    expect(duplicate.error?.message).toBe(errorCatalogue.ORGANIZATION_ALREADY_EXISTS.message);

    const removed = await client.organization.delete({ organizationId });
    expect(removed.error).toBeNull();
    expect((await client.getSession()).data?.session).toMatchObject({ activeOrganizationId: null });
  });
}

describe('organizations (real processes, mailed invitations)', () => organizationSuite(false));
// The same walk with the Redis session cache answering get-session: the active organization and team, and
// their clearing on leave, removal and deletion, must reach the cache as they reach Postgres.
describeWithRedis('organizations with the Redis session cache', () => organizationSuite(true));

/**
 * The membership limit under concurrency: every invited user accepts at the same moment, and the limit is
 * reached exactly, with every other accept refused with the catalogue's error and nothing half-written.
 */
describe('membership limit under concurrent accepts', () => {
  const LIMIT = 6;
  const INVITED = 14;
  let system: MailSystem;

  beforeAll(async () => {
    system = await startMailSystem({ smtp: false, env: { AUTH_ORGANIZATION_MEMBERSHIP_LIMIT: String(LIMIT) } });
  });

  afterAll(async () => {
    await system?.stop();
  });

  it('reaches exactly the limit when many users accept at once', async () => {
    const owner = new HttpClient(system.authUrl);
    expect((await owner.post('sign-up/email', { name: 'Owner', email: uniqueEmail('limit-owner'), password: DEFAULT_PASSWORD })).status).toBe(200);
    const org = await owner.post<OrganizationJson>('organization/create', { name: 'Limited', slug: `limited-${Date.now()}` });
    expect(org.status, org.text).toBe(200);

    const invitees = await Promise.all(
      Array.from({ length: INVITED }, async (_, i) => {
        const email = uniqueEmail(`limit-${i}`);
        const invitation = await owner.post<InvitationJson>('organization/invite-member', { email, role: 'member' });
        expect(invitation.status, invitation.text).toBe(200);
        const browser = new HttpClient(system.authUrl);
        expect((await browser.post('sign-up/email', { name: `Invitee ${i}`, email, password: DEFAULT_PASSWORD })).status).toBe(200);
        return { browser, invitationId: invitation.json.id };
      }),
    );

    const answers = await Promise.all(
      invitees.map(({ browser, invitationId }) => browser.post('organization/accept-invitation', { invitationId })),
    );
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    // The owner holds one of the places.
    expect(accepted).toHaveLength(LIMIT - 1);
    for (const answer of refused) expectCatalogueError(answer, 'ORGANIZATION_MEMBERSHIP_LIMIT_REACHED');

    const members = await system.query<{ n: string }>(`SELECT count(*) AS n FROM member WHERE "organizationId" = $1`, [org.json.id]);
    expect(Number(members[0]!.n)).toBe(LIMIT);
    const listed = await owner.get<{ total: number }>('organization/list-members');
    expect(listed.json.total).toBe(LIMIT);
    // A refused accept leaves its invitation pending, not half-accepted.
    const statuses = await system.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM invitation WHERE "organizationId" = $1 GROUP BY status ORDER BY status`,
      [org.json.id],
    );
    expect(statuses.map((s) => [s.status, Number(s.n)])).toEqual([
      ['accepted', LIMIT - 1],
      ['pending', INVITED - (LIMIT - 1)],
    ]);
  });
});
