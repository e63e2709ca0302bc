import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventMetadata } from '@portcullis/contracts';
import { createTokenSealer, signEmailVerificationToken, sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { expectRefusal, organizationApi, type MemberJson, type SignedUpUser } from '../../../../tests/support/organization-api.ts';

const API_KEY = 'invitation-routes-server-api-key-0123456789';
const HOUR_MS = 3_600_000;
const EXPIRES_IN_SECONDS = 172_800;

interface InvitationJson {
  id: string;
  organizationId: string;
  email: string;
  role: string;
  status: string;
  teamId: string | null;
  inviterId: string;
  expiresAt: string;
  createdAt: string;
}
interface MailJobJson {
  jobId: string;
  kind: string;
  userId: string;
  to: string;
  name: string;
  sealedToken: string;
  callbackURL: string | null;
  expiresAt: string;
  invitation?: { organizationName: string; inviterName: string; inviterEmail: string; role: string };
}

const baseEnv = {
  AUTH_SECRET: 'invitation-routes-secret-0123456789abcdef',
  BASE_URL: 'http://localhost:3000',
  AUTH_RATE_LIMIT_ENABLED: 'false',
  AUTH_SERVER_API_KEY: API_KEY,
};

/** A clock the spec moves forward, so expiry is tested without waiting. */
function movableClock() {
  let offsetMs = 0;
  return { now: (): Date => new Date(Date.now() + offsetMs), advance: (ms: number): void => void (offsetMs += ms) };
}

/** The organization requests of `organizationApi`, and the invitation ones: verifying an address, inviting, the mails queued. */
function client(api: InProcessApi, clock: ReturnType<typeof movableClock>) {
  const http = organizationApi(api);
  const { call } = http;

  async function verifyEmail(user: SignedUpUser): Promise<void> {
    const token = await signEmailVerificationToken({ email: user.email, userId: user.userId }, api.config.secret, 3600, clock.now());
    const verified = await call('GET', `/verify-email?token=${encodeURIComponent(token)}`);
    expect(verified.status, JSON.stringify(verified.json)).toBe(200);
  }

  async function invite(inviter: SignedUpUser, body: Record<string, unknown>): Promise<InvitationJson> {
    const answer = await call<InvitationJson>('POST', '/organization/invite-member', body, inviter.headers);
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return answer.json;
  }

  /** The invitation mail jobs queued for an address, oldest first, from the log. */
  async function invitationMails(to: string): Promise<MailJobJson[]> {
    // The recipient is encrypted in the log (under the address's key): opened as the services open it.
    const rows = (await api.db.pool.any(sql.unsafe`
      SELECT type, data, metadata FROM events WHERE type = 'mail.job_queued.v1' AND data->>'kind' = 'invitation'
      ORDER BY position`)) as unknown as Array<{ type: string; data: MailJobJson; metadata: EventMetadata }>;
    const opened = await api.db.personalData.decode(rows);
    return opened.map((row) => row.data).filter((job) => job.to === to);
  }

  return { ...http, verifyEmail, invite, invitationMails };
}

/**
 * Invitations over HTTP (`inject` on real stores, projections in-process): invite, resend, accept, reject,
 * cancel, get and list, with better-auth 1.7's answers and the spec's refusals.
 */
describe('invitation routes', () => {
  const clock = movableClock();
  let api: InProcessApi;
  let http: ReturnType<typeof client>;
  let owner: SignedUpUser;
  let admin: SignedUpUser;
  let member: SignedUpUser;
  let outsider: SignedUpUser;
  let organizationId: string;

  beforeAll(async () => {
    api = await startInProcessApi('invitation_routes', baseEnv, { clock: clock.now });
    http = client(api, clock);
    [owner, admin, member, outsider] = await Promise.all([http.newUser('owner'), http.newUser('admin'), http.newUser('member'), http.newUser('outsider')]);
    organizationId = await http.newOrganization(owner, 'Acme', [
      [admin, 'admin'],
      [member, 'member'],
    ]);
  });

  afterAll(async () => {
    await api?.close();
  });

  it('invites a lower-cased address and queues its mail, carrying the invitation id, in the same write', async () => {
    const before = clock.now().getTime();
    const invitation = await http.invite(owner, { email: 'Guest.One@Example.com', role: ['admin', 'member'] });
    expect(invitation).toEqual({
      id: expect.any(String),
      organizationId,
      email: 'guest.one@example.com',
      role: 'admin,member',
      status: 'pending',
      teamId: null,
      inviterId: owner.userId,
      expiresAt: expect.any(String),
      createdAt: expect.any(String),
    });
    const expiresAt = Date.parse(invitation.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + EXPIRES_IN_SECONDS * 1000);
    expect(expiresAt).toBeLessThanOrEqual(clock.now().getTime() + EXPIRES_IN_SECONDS * 1000);

    const [mail, ...more] = await http.invitationMails('guest.one@example.com');
    expect(more).toEqual([]);
    expect(mail).toMatchObject({
      kind: 'invitation',
      userId: owner.userId,
      to: 'guest.one@example.com',
      name: '',
      callbackURL: null,
      expiresAt: invitation.expiresAt,
      invitation: { organizationName: 'Acme', inviterName: 'owner', inviterEmail: owner.email, role: 'admin,member' },
    });
    expect(createTokenSealer(api.config.secret).open(mail!.sealedToken, mail!.jobId)).toBe(invitation.id);
    const positions = await api.db.pool.any(sql.unsafe`
      SELECT type, metadata->>'requestId' AS request_id FROM events
      WHERE type IN ('organization.invitation_created.v1', 'mail.job_queued.v1') AND (data->>'invitationId' = ${invitation.id} OR data->>'jobId' = ${mail!.jobId})`);
    expect(positions).toHaveLength(2);
    expect(new Set(positions.map((row) => (row as { request_id: string }).request_id)).size).toBe(1);
  });

  it('resends a pending invitation when asked to: one invitation, a later expiry, a mail each time', async () => {
    const first = await http.invite(owner, { email: 'again@example.com', role: 'member' });
    // Unasked, inviting the address again is refused, as better-auth does.
    expectRefusal(
      await http.call('POST', '/organization/invite-member', { email: 'again@example.com', role: 'member' }, owner.headers),
      'USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION',
    );
    clock.advance(HOUR_MS);
    const second = await http.invite(admin, { email: 'AGAIN@example.com', role: 'member', resend: true });
    clock.advance(HOUR_MS);
    const third = await http.invite(owner, { email: 'again@example.com', role: 'member', resend: true });
    expect([second.id, third.id]).toEqual([first.id, first.id]);
    expect(Date.parse(second.expiresAt)).toBeGreaterThanOrEqual(Date.parse(first.expiresAt) + HOUR_MS);
    expect(Date.parse(third.expiresAt)).toBeGreaterThanOrEqual(Date.parse(second.expiresAt) + HOUR_MS);
    expect(third).toMatchObject({ status: 'pending', inviterId: owner.userId, createdAt: first.createdAt });
    expect(Number(await api.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM invitation WHERE email = 'again@example.com'`))).toBe(1);
    expect(
      await api.db.pool.oneFirst(sql.unsafe`SELECT "expiresAt" FROM invitation WHERE id = ${first.id}`).then((at) => new Date(at as number).toISOString()),
    ).toBe(third.expiresAt);
    const mails = await http.invitationMails('again@example.com');
    expect(mails.map((m) => [m.userId, m.expiresAt])).toEqual([
      [owner.userId, first.expiresAt],
      [admin.userId, second.expiresAt],
      [owner.userId, third.expiresAt],
    ]);
  });

  it('refuses invitations the caller may not send', async () => {
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'x@example.com', role: 'member' }), 'UNAUTHORIZED');
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'x@example.com', role: 'member' }, outsider.headers), 'ORGANIZATION_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'x@example.com', role: 'member', organizationId }, outsider.headers), 'MEMBER_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'not an address', role: 'member' }, owner.headers), 'INVALID_EMAIL');
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'x@example.com', role: 'member' }, member.headers), 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION');
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'x@example.com', role: 'superuser' }, owner.headers), 'ROLE_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'x@example.com', role: 'owner' }, admin.headers), 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE');
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: member.email.toUpperCase(), role: 'admin' }, owner.headers), 'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION');
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'x@example.com', role: 'member', teamId: 'no-such-team' }, owner.headers), 'TEAM_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'x@example.com' }, owner.headers), 'VALIDATION_ERROR');
    expect(await http.invitationMails('x@example.com')).toEqual([]);
  });

  it('shows the recipient the invitation and lets them accept it, making the organization and team active', async () => {
    const teams = await http.call('GET', `/organization/list-teams?organizationId=${organizationId}`, undefined, owner.headers);
    expect(teams.status).toBe(200);
    const teamId = (teams.json as { id: string }[])[0]!.id;
    const invitation = await http.invite(admin, { email: 'Joiner@Example.com', role: 'admin', teamId });
    expect(invitation.teamId).toBe(teamId);
    const joiner = await http.newUser('joiner', 'JOINER@example.com');
    const stranger = await http.newUser('stranger');

    expectRefusal(await http.call('GET', `/organization/get-invitation?id=${invitation.id}`), 'NOT_AUTHENTICATED');
    expectRefusal(await http.call('GET', `/organization/get-invitation?id=${invitation.id}`, undefined, stranger.headers), 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
    expectRefusal(await http.call('GET', '/organization/get-invitation?id=nope', undefined, joiner.headers), 'INVITATION_NOT_FOUND');
    const shown = await http.call('GET', `/organization/get-invitation?id=${invitation.id}`, undefined, joiner.headers);
    expect(shown).toEqual({
      status: 200,
      json: { ...invitation, organizationName: 'Acme', organizationSlug: expect.stringMatching(/^acme-/), inviterEmail: admin.email },
    });

    expectRefusal(await http.call('POST', '/organization/accept-invitation', { invitationId: invitation.id }), 'UNAUTHORIZED');
    expectRefusal(await http.call('POST', '/organization/accept-invitation', { invitationId: invitation.id }, stranger.headers), 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
    expectRefusal(await http.call('POST', '/organization/accept-invitation', { invitationId: 'nope' }, joiner.headers), 'INVITATION_NOT_FOUND');
    const accepted = await http.call('POST', '/organization/accept-invitation', { invitationId: invitation.id }, joiner.headers);
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(200);
    const { invitation: acceptedInvitation, member: joined } = accepted.json as { invitation: InvitationJson; member: MemberJson };
    expect(acceptedInvitation).toEqual({ ...invitation, status: 'accepted' });
    expect(joined).toEqual({ id: expect.any(String), organizationId, userId: joiner.userId, role: 'admin', teamId, createdAt: expect.any(String) });
    expect(await http.activeSelection(joiner)).toEqual({ activeOrganizationId: organizationId, activeTeamId: teamId });
    expect(await api.db.pool.anyFirst(sql.unsafe`SELECT "userId" FROM "teamMember" WHERE "teamId" = ${teamId} AND "userId" = ${joiner.userId}`)).toEqual([joiner.userId]);
    expect(await api.db.pool.oneFirst(sql.unsafe`SELECT role FROM member WHERE "organizationId" = ${organizationId} AND "userId" = ${joiner.userId}`)).toBe('admin');

    // Once accepted it is no longer open: neither shown, nor accepted, nor rejected again.
    expectRefusal(await http.call('GET', `/organization/get-invitation?id=${invitation.id}`, undefined, joiner.headers), 'INVITATION_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/accept-invitation', { invitationId: invitation.id }, joiner.headers), 'INVITATION_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/reject-invitation', { invitationId: invitation.id }, joiner.headers), 'INVITATION_NOT_FOUND');
  });

  it('lets the recipient reject an invitation, which then cannot be accepted', async () => {
    const invitation = await http.invite(owner, { email: 'decliner@example.com', role: 'member' });
    const decliner = await http.newUser('decliner', 'decliner@example.com');
    expectRefusal(await http.call('POST', '/organization/reject-invitation', { invitationId: invitation.id }, outsider.headers), 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
    const rejected = await http.call('POST', '/organization/reject-invitation', { invitationId: invitation.id }, decliner.headers);
    expect(rejected).toEqual({ status: 200, json: { invitation: { ...invitation, status: 'rejected' }, member: null } });
    expectRefusal(await http.call('POST', '/organization/accept-invitation', { invitationId: invitation.id }, decliner.headers), 'INVITATION_NOT_FOUND');
    expect(await http.activeSelection(decliner)).toEqual({ activeOrganizationId: null, activeTeamId: null });
  });

  it('lets those holding invitation:cancel cancel a pending invitation', async () => {
    const invitation = await http.invite(owner, { email: 'withdrawn@example.com', role: 'member' });
    expectRefusal(await http.call('POST', '/organization/cancel-invitation', { invitationId: invitation.id }), 'UNAUTHORIZED');
    expectRefusal(await http.call('POST', '/organization/cancel-invitation', { invitationId: invitation.id }, member.headers), 'YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION');
    expectRefusal(await http.call('POST', '/organization/cancel-invitation', { invitationId: invitation.id }, outsider.headers), 'MEMBER_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/cancel-invitation', { invitationId: 'nope' }, owner.headers), 'INVITATION_NOT_FOUND');
    const canceled = await http.call('POST', '/organization/cancel-invitation', { invitationId: invitation.id }, admin.headers);
    expect(canceled).toEqual({ status: 200, json: { ...invitation, status: 'canceled' } });
    expectRefusal(await http.call('POST', '/organization/cancel-invitation', { invitationId: invitation.id }, owner.headers), 'INVITATION_NOT_FOUND');
    const withdrawn = await http.newUser('withdrawn', 'withdrawn@example.com');
    expectRefusal(await http.call('POST', '/organization/accept-invitation', { invitationId: invitation.id }, withdrawn.headers), 'INVITATION_NOT_FOUND');
    // A canceled invitation no longer stands in the way of a new one.
    const fresh = await http.invite(owner, { email: 'withdrawn@example.com', role: 'member' });
    expect(fresh.id).not.toBe(invitation.id);
  });

  it('cannot fetch, accept or reject an expired invitation; inviting again renews it', async () => {
    const invitation = await http.invite(owner, { email: 'late@example.com', role: 'member' });
    const late = await http.newUser('late', 'late@example.com');
    clock.advance(EXPIRES_IN_SECONDS * 1000 + 1000);
    expectRefusal(await http.call('GET', `/organization/get-invitation?id=${invitation.id}`, undefined, late.headers), 'INVITATION_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/accept-invitation', { invitationId: invitation.id }, late.headers), 'INVITATION_NOT_FOUND');
    expectRefusal(await http.call('POST', '/organization/reject-invitation', { invitationId: invitation.id }, late.headers), 'INVITATION_NOT_FOUND');

    const renewed = await http.invite(owner, { email: 'late@example.com', role: 'member' });
    expect(renewed.id).toBe(invitation.id);
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(clock.now().getTime());
    const accepted = await http.call('POST', '/organization/accept-invitation', { invitationId: invitation.id }, late.headers);
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(200);
    expect(await http.activeSelection(late)).toEqual({ activeOrganizationId: organizationId, activeTeamId: null });
  });

  it("refuses to show or honour an invitation whose inviter is no longer a member", async () => {
    const leaving = await http.newUser('leaving');
    const added = await http.call('POST', '/organization/add-member', { userId: leaving.userId, role: 'admin', organizationId }, { 'x-api-key': API_KEY });
    expect(added.status, JSON.stringify(added.json)).toBe(200);
    const invitation = await http.invite(leaving, { email: 'orphan@example.com', role: 'member', organizationId });
    const orphan = await http.newUser('orphan', 'orphan@example.com');
    expect((await http.call('GET', `/organization/get-invitation?id=${invitation.id}`, undefined, orphan.headers)).status).toBe(200);
    const removed = await http.call('POST', '/organization/remove-member', { memberIdOrEmail: leaving.email, organizationId }, owner.headers);
    expect(removed.status, JSON.stringify(removed.json)).toBe(200);
    expectRefusal(
      await http.call('GET', `/organization/get-invitation?id=${invitation.id}`, undefined, orphan.headers),
      'INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION',
    );
    expectRefusal(
      await http.call('POST', '/organization/accept-invitation', { invitationId: invitation.id }, orphan.headers),
      'INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION',
    );
  });

  it("lists an organization's invitations to those who may invite, owner-role ones only to owners", async () => {
    const ownerRole = await http.invite(owner, { email: 'next-owner@example.com', role: 'owner' });
    const byOwner = await http.call('GET', `/organization/list-invitations?organizationId=${organizationId}`, undefined, owner.headers);
    expect(byOwner.status).toBe(200);
    const ownerView = byOwner.json as InvitationJson[];
    expect(ownerView.map((i) => i.id)).toContain(ownerRole.id);
    expect(new Set(ownerView.map((i) => i.status))).toEqual(new Set(['pending', 'accepted', 'rejected', 'canceled']));
    expect(ownerView.every((i) => i.organizationId === organizationId)).toBe(true);

    // The admin's active organization is this one, so it need not be named.
    const byAdmin = await http.call('GET', '/organization/list-invitations', undefined, admin.headers);
    expect(byAdmin.status).toBe(200);
    expect((byAdmin.json as InvitationJson[]).map((i) => i.id)).toEqual(ownerView.filter((i) => i.role !== 'owner').map((i) => i.id));

    expectRefusal(await http.call('GET', '/organization/list-invitations'), 'UNAUTHORIZED');
    expectRefusal(await http.call('GET', '/organization/list-invitations', undefined, outsider.headers), 'ORGANIZATION_ID_IS_REQUIRED');
    expectRefusal(await http.call('GET', `/organization/list-invitations?organizationId=${organizationId}`, undefined, outsider.headers), 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
    expectRefusal(await http.call('GET', '/organization/list-invitations', undefined, member.headers), 'YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS');
  });

  it("lists a verified user's own pending invitations; an address only on server calls", async () => {
    const other = await http.newUser('other-owner');
    const otherOrganization = await http.newOrganization(other, 'Beta');
    const invitee = await http.newUser('invitee', 'invitee@example.com');
    const fromAcme = await http.invite(owner, { email: 'invitee@example.com', role: 'member', organizationId });
    const fromBeta = await http.invite(other, { email: 'Invitee@example.com', role: 'admin', organizationId: otherOrganization });
    const declined = await http.invite(other, { email: 'declined@example.com', role: 'member' });
    const decliner = await http.newUser('declined', 'declined@example.com');
    expect((await http.call('POST', '/organization/reject-invitation', { invitationId: declined.id }, decliner.headers)).status).toBe(200);

    expectRefusal(await http.call('GET', '/organization/list-user-invitations', undefined, invitee.headers), 'EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION');
    await http.verifyEmail(invitee);
    const own = await http.call('GET', '/organization/list-user-invitations', undefined, invitee.headers);
    expect(own.status, JSON.stringify(own.json)).toBe(200);
    expect(own.json).toEqual([
      { ...fromAcme, organizationName: 'Acme' },
      { ...fromBeta, organizationName: 'Beta' },
    ]);

    expectRefusal(await http.call('GET', '/organization/list-user-invitations?email=invitee@example.com', undefined, invitee.headers), 'USER_EMAIL_CANNOT_BE_PASSED_FOR_CLIENT_SIDE_API_CALLS');
    expectRefusal(await http.call('GET', '/organization/list-user-invitations'), 'MISSING_SESSION_HEADERS_OR_EMAIL_QUERY_PARAMETER');
    expectRefusal(await http.call('GET', '/organization/list-user-invitations?email=invitee@example.com', undefined, { 'x-api-key': 'wrong' }), 'UNAUTHORIZED');
    const byServer = await http.call('GET', '/organization/list-user-invitations?email=INVITEE@example.com', undefined, { 'x-api-key': API_KEY });
    expect(byServer).toEqual(own);
    const none = await http.call('GET', '/organization/list-user-invitations?email=declined@example.com', undefined, { 'x-api-key': API_KEY });
    expect(none).toEqual({ status: 200, json: [] });
  });
});

/** The limits: pending invitations per organization, and members per organization when accepting. */
describe('invitation routes at their limits', () => {
  const clock = movableClock();
  let api: InProcessApi;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    api = await startInProcessApi(
      'invitation_limits',
      { ...baseEnv, AUTH_ORGANIZATION_INVITATION_LIMIT: '2', AUTH_ORGANIZATION_MEMBERSHIP_LIMIT: '2' },
      { clock: clock.now },
    );
    http = client(api, clock);
  });

  afterAll(async () => {
    await api?.close();
  });

  it('refuses a new invitation past the limit of pending ones, but still resends', async () => {
    const owner = await http.newUser('owner');
    await http.newOrganization(owner, 'Small');
    const first = await http.invite(owner, { email: 'one@example.com', role: 'member' });
    await http.invite(owner, { email: 'two@example.com', role: 'member' });
    expectRefusal(await http.call('POST', '/organization/invite-member', { email: 'three@example.com', role: 'member' }, owner.headers), 'INVITATION_LIMIT_REACHED');
    expect((await http.invite(owner, { email: 'one@example.com', role: 'member', resend: true })).id).toBe(first.id);
    expect((await http.call('POST', '/organization/cancel-invitation', { invitationId: first.id }, owner.headers)).status).toBe(200);
    await http.invite(owner, { email: 'three@example.com', role: 'member' });
  });

  it('refuses to accept once the organization is full, leaving the invitation pending', async () => {
    const owner = await http.newUser('owner');
    await http.newOrganization(owner, 'Tiny');
    const first = await http.invite(owner, { email: 'first@example.com', role: 'member' });
    const second = await http.invite(owner, { email: 'second@example.com', role: 'member' });
    const firstUser = await http.newUser('first', 'first@example.com');
    const secondUser = await http.newUser('second', 'second@example.com');
    expect((await http.call('POST', '/organization/accept-invitation', { invitationId: first.id }, firstUser.headers)).status).toBe(200);
    expectRefusal(
      await http.call('POST', '/organization/accept-invitation', { invitationId: second.id }, secondUser.headers),
      'ORGANIZATION_MEMBERSHIP_LIMIT_REACHED',
    );
    expect(await api.db.pool.oneFirst(sql.unsafe`SELECT status FROM invitation WHERE id = ${second.id}`)).toBe('pending');
    expect(await http.activeSelection(secondUser)).toEqual({ activeOrganizationId: null, activeTeamId: null });
  });
});
