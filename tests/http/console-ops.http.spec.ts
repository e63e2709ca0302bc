import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpsLookupAnswer, OpsOrganizationAnswer, OpsOrganizationsAnswer, OpsSessionsAnswer, OpsUserAnswer, OpsUsersBulkAnswer } from '@portcullis/contracts';
import { startAdminSystem, type AdminSystem } from '../support/admin-system.ts';
import { DEFAULT_PASSWORD, expectCatalogueError, signUp, uniqueEmail } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { waitFor } from '../support/processes.ts';
import { HttpClient, type HttpResponse } from '../support/system.ts';

/**
 * The ops console's admin views and bulk actions end to end, listening beyond loopback (where the ops
 * endpoints want an operator): two api processes on one log, the second knowing the root admin; users signed up
 * from addresses of their own (a trusted proxy's X-Forwarded-For); the mailer on the dev mailbox.
 */
const SERVER_KEY = 'console-ops-server-key-0123456789abcdef';
let admins: AdminSystem<MailSystem>;
let root: HttpClient;

interface Person {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly client: HttpClient;
}

/** A user signed up from `address` on the users' api, its client holding the session. */
async function newUser(label: string, address: string): Promise<Person> {
  const client = new HttpClient(admins.system.authUrl, { 'x-forwarded-for': address });
  const name = `${label} ${Math.random().toString(36).slice(2, 8)}`;
  const signedUp = await signUp(client, { name, email: uniqueEmail(label) });
  return { id: signedUp.user.id, email: signedUp.user.email, name, client };
}

/** A user the root admin makes an admin by role, signed in on the admin api. */
async function newRoleAdmin(label: string): Promise<Person> {
  const email = uniqueEmail(label);
  const created = await root.post<{ user: { id: string } }>('admin/create-user', { email, password: DEFAULT_PASSWORD, name: label, role: 'admin' });
  expect(created.status, created.text).toBe(200);
  const client = adminApiClient();
  expect((await client.post('sign-in/email', { email, password: DEFAULT_PASSWORD })).status).toBe(200);
  return { id: created.json.user.id, email, name: label, client };
}

/** A client of the admin api; its Origin stays the system's, which the origin check trusts. */
function adminApiClient(): HttpClient {
  return new HttpClient(`${admins.adminUrl}/api/auth`, { origin: admins.system.baseUrl });
}

type Caller = 'key' | 'anonymous' | HttpClient;

/** A GET of an ops endpoint on the admin api: with the server key, with nothing, or with a client's cookies. */
async function ops<T>(path: string, as: Caller = 'key'): Promise<HttpResponse<T>> {
  const client = typeof as === 'string' ? adminApiClient() : as;
  const headers: Record<string, string> = as === 'key' ? { 'x-api-key': SERVER_KEY } : {};
  return client.get<T>(`${admins.adminUrl}${path}`, { headers });
}

async function bulk(as: HttpClient, body: unknown): Promise<HttpResponse<OpsUsersBulkAnswer>> {
  return as.post<OpsUsersBulkAnswer>(`${admins.adminUrl}/ops/users/bulk`, body);
}

/** A refusal by status and code alone, where the message says which part of the request failed. */
function expectRefusal(response: HttpResponse, status: number, code: string): void {
  expect({ status: response.status, code: (response.json as { code?: string } | undefined)?.code }, response.text).toEqual({ status, code });
}

async function sessions(query: string): Promise<OpsSessionsAnswer> {
  const answer = await ops<OpsSessionsAnswer>(`/ops/sessions?${query}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.json;
}

beforeAll(async () => {
  admins = await startAdminSystem(
    { env: { HOST: '0.0.0.0', AUTH_SERVER_API_KEY: SERVER_KEY, AUTH_TRUSTED_PROXIES: 'loopback', AUTH_RATE_LIMIT_ENABLED: 'false' } },
    (options) => startMailSystem({ ...options, smtp: false }),
  );
  root = adminApiClient();
  expect((await root.post('sign-in/email', { email: admins.rootEmail, password: DEFAULT_PASSWORD })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await admins?.stop();
});

describe('access', () => {
  const reads = ['/ops/sessions', '/ops/organizations', '/ops/organizations/none', '/ops/users/none', '/ops/lookup?id=none'];

  it('refuses every view to anonymous callers (401) and to a non-admin\'s session (403)', async () => {
    const user = await newUser('plain', '198.51.100.1');
    const onAdminApi = adminApiClient();
    expect((await onAdminApi.post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);
    for (const path of reads) {
      expectCatalogueError(await ops(path, 'anonymous'), 'UNAUTHORIZED');
      expect((await ops(path, onAdminApi)).status, path).toBe(403);
    }
    expectCatalogueError(await bulk(adminApiClient(), { action: 'ban', userIds: [user.id] }), 'UNAUTHORIZED');
    expectCatalogueError(await bulk(onAdminApi, { action: 'ban', userIds: [user.id] }), 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
    expectCatalogueError(await bulk(onAdminApi, { action: 'revoke-sessions', userIds: [user.id] }), 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS');
  });

  it('answers an admin\'s own session, and refuses the views and bulk actions to an impersonation session', async () => {
    expect((await ops('/ops/sessions?limit=1', root)).status).toBe(200);
    const user = await newUser('bystander', '198.51.100.2');
    const impersonated = await newRoleAdmin('impersonated-admin');
    const impersonating = adminApiClient();
    expect((await impersonating.post('sign-in/email', { email: admins.rootEmail, password: DEFAULT_PASSWORD })).status).toBe(200);
    expect((await impersonating.post('admin/impersonate-user', { userId: impersonated.id })).status).toBe(200);
    expectCatalogueError(await bulk(impersonating, { action: 'ban', userIds: [user.id] }), 'YOU_CANNOT_ACT_AS_ADMIN_WHILE_IMPERSONATING');
    expect((await ops('/ops/sessions?limit=1', impersonating)).status).toBe(403);
    expect((await impersonating.post('admin/stop-impersonating')).status).toBe(200);
    expect((await ops('/ops/sessions?limit=1', impersonating)).status).toBe(200);
  });
});

describe('live sessions', () => {
  let first: Person;
  let second: Person;
  let third: Person;

  beforeAll(async () => {
    first = await newUser('first', '203.0.113.7');
    second = await newUser('second', '203.0.113.200');
    third = await newUser('third', '192.0.2.9');
  });

  it('filters by several users, comma-separated or repeated, with their names and a total', async () => {
    const listed = await sessions(`user=${first.id},${second.id}&sortBy=createdAt&sortDirection=asc`);
    expect(listed.total).toBe(2);
    expect(listed.sessions.map((s) => s.user)).toEqual([
      { id: first.id, name: first.name, email: first.email },
      { id: second.id, name: second.name, email: second.email },
    ]);
    expect(listed.sessions[0]).toMatchObject({ ipAddress: '203.0.113.7', impersonatedBy: null });
    expect(listed.sessions[0]!.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    const repeated = await sessions(`user=${first.id}&user=${third.id}`);
    expect(repeated.sessions.map((s) => s.user.id).sort()).toEqual([first.id, third.id].sort());
    const paged = await sessions(`user=${first.id},${second.id},${third.id}&limit=1&offset=1&sortBy=createdAt&sortDirection=asc`);
    expect(paged).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(paged.sessions.map((s) => s.user.id)).toEqual([second.id]);
  });

  it('filters by an address or a CIDR range', async () => {
    const users = `user=${first.id},${second.id},${third.id}`;
    expect((await sessions(`${users}&ip=203.0.113.0/24`)).sessions.map((s) => s.user.id).sort()).toEqual([first.id, second.id].sort());
    expect((await sessions(`${users}&ip=203.0.113.128/25`)).sessions.map((s) => s.user.id)).toEqual([second.id]);
    expect((await sessions(`${users}&ip=192.0.2.9`)).sessions.map((s) => s.user.id)).toEqual([third.id]);
    expect((await sessions(`${users}&ip=::ffff:192.0.2.0/120`)).total).toBe(1);
    expect((await sessions(`${users}&ip=2001:db8::/32`)).total).toBe(0);
    expectCatalogueError(await ops('/ops/sessions?ip=203.0.113.0/33'), 'INVALID_QUERY_PARAMETERS');
  });

  it('filters by age and by when they were opened', async () => {
    const users = `user=${first.id},${second.id},${third.id}`;
    const [opened] = (await sessions(`user=${second.id}`)).sessions;
    expect((await sessions(`${users}&maxAgeSeconds=3600`)).total).toBe(3);
    expect((await sessions(`${users}&minAgeSeconds=3600`)).total).toBe(0);
    expect((await sessions(`${users}&createdAfter=${encodeURIComponent(opened!.createdAt)}`)).sessions.map((s) => s.user.id).sort()).toEqual([second.id, third.id].sort());
    expect((await sessions(`${users}&createdBefore=${encodeURIComponent(opened!.createdAt)}`)).sessions.map((s) => s.user.id)).toEqual([first.id]);
  });

  it('shows impersonation sessions with the admin\'s name, and leaves out revoked ones', async () => {
    const admin = await newRoleAdmin('support-admin');
    expect((await admin.client.post('admin/impersonate-user', { userId: third.id })).status).toBe(200);
    const impersonated = await sessions(`user=${third.id}&impersonated=true`);
    expect(impersonated.total).toBe(1);
    expect(impersonated.sessions[0]!.impersonatedBy).toEqual({ id: admin.id, name: 'support-admin', email: admin.email });
    expect((await sessions(`user=${third.id}&impersonated=false`)).total).toBe(1);
    expect((await admin.client.post('admin/stop-impersonating')).status).toBe(200);
    expect((await sessions(`user=${third.id}`)).total).toBe(1);

    const [own] = (await sessions(`user=${first.id}`)).sessions;
    expect((await root.post('admin/revoke-user-session', { sessionToken: own!.tokenHash })).json).toEqual({ success: true });
    expect((await sessions(`user=${first.id}`)).total).toBe(0);
    // An ended session is still named by the log: whose it was, and that it is over.
    const ended = await ops<OpsLookupAnswer>(`/ops/lookup?id=${own!.id}`);
    expect(ended.json.matches).toEqual([{ kind: 'session', id: own!.id, user: own!.user, live: false, tokenHash: null }]);
  });
});

describe('organizations', () => {
  let owner: Person;
  let member: Person;
  let organizationId: string;
  let invitationId: string;
  const slug = `acme-${Math.random().toString(36).slice(2, 10)}`;

  beforeAll(async () => {
    owner = await newUser('owner', '198.51.100.10');
    member = await newUser('member', '198.51.100.11');
    const created = await owner.client.post<{ id: string }>('organization/create', { name: `Acme ${slug}`, slug });
    expect(created.status, created.text).toBe(200);
    organizationId = created.json.id;
    const added = await new HttpClient(admins.system.authUrl, { 'x-api-key': SERVER_KEY }).post('organization/add-member', { userId: member.id, role: 'admin', organizationId });
    expect(added.status, added.text).toBe(200);
    const invited = await owner.client.post<{ id: string }>('organization/invite-member', { email: uniqueEmail('invitee'), role: 'member', organizationId });
    expect(invited.status, invited.text).toBe(200);
    invitationId = invited.json.id;
  });

  it('lists organizations searched by name or slug, with member counts and a total', async () => {
    const found = await ops<OpsOrganizationsAnswer>(`/ops/organizations?search=${slug.toUpperCase()}`);
    expect(found.json).toMatchObject({ total: 1, organizations: [{ id: organizationId, slug, name: `Acme ${slug}`, memberCount: 2 }] });
    const all = await ops<OpsOrganizationsAnswer>('/ops/organizations?sortBy=memberCount&limit=1');
    expect(all.json.organizations).toHaveLength(1);
    expect(all.json.total).toBeGreaterThanOrEqual(1);
  });

  it('shows one organization with named members, invitations with their inviter, and teams with members', async () => {
    const detail = (await ops<OpsOrganizationAnswer>(`/ops/organizations/${organizationId}`, root)).json;
    expect(detail.organization).toMatchObject({ id: organizationId, slug, memberCount: 2 });
    expect(detail.members.map((m) => ({ user: m.user, role: m.role }))).toEqual([
      { user: { id: owner.id, name: owner.name, email: owner.email }, role: 'owner' },
      { user: { id: member.id, name: member.name, email: member.email }, role: 'admin' },
    ]);
    expect(detail.invitations).toEqual([
      expect.objectContaining({ id: invitationId, status: 'pending', expired: false, inviter: { id: owner.id, name: owner.name, email: owner.email } }),
    ]);
    // A new organization gets a team of its name holding its creator (AUTH_ORGANIZATION_DEFAULT_TEAM).
    expect(detail.teams).toHaveLength(1);
    expect(detail.teams[0]!.members.map((m) => m.user)).toEqual([{ id: owner.id, name: owner.name, email: owner.email }]);
    expectRefusal(await ops('/ops/organizations/no-such-organization'), 404, 'ORGANIZATION_NOT_FOUND');
  });

  it('looks up every kind of id a log line may carry', async () => {
    const lookup = async (id: string) => {
      const answer = await ops<OpsLookupAnswer>(`/ops/lookup?id=${encodeURIComponent(id)}`);
      expect(answer.status, answer.text).toBe(200);
      return answer.json.matches;
    };
    expect(await lookup(owner.id)).toEqual([{ kind: 'user', id: owner.id, user: { id: owner.id, name: owner.name, email: owner.email } }]);
    expect(await lookup(organizationId)).toEqual([{ kind: 'organization', id: organizationId, name: `Acme ${slug}`, slug }]);
    expect(await lookup(invitationId)).toEqual([expect.objectContaining({ kind: 'invitation', organizationId, organizationName: `Acme ${slug}`, status: 'pending' })]);
    const detail = (await ops<OpsOrganizationAnswer>(`/ops/organizations/${organizationId}`)).json;
    expect(await lookup(detail.teams[0]!.id)).toEqual([expect.objectContaining({ kind: 'team', organizationId })]);
    const [session] = (await sessions(`user=${member.id}`)).sessions;
    expect(await lookup(session!.id)).toEqual([{ kind: 'session', id: session!.id, user: session!.user, live: true, tokenHash: session!.tokenHash }]);

    expect((await new HttpClient(admins.system.authUrl).post('request-password-reset', { email: member.email, redirectTo: '/reset' })).status).toBe(200);
    let jobId = '';
    await waitFor(async () => {
      const rows = await admins.system.query<{ job_id: string }>('SELECT job_id FROM mail_delivery WHERE user_id = $1', [member.id]);
      jobId = rows[0]?.job_id ?? '';
      return jobId !== '';
    }, { timeoutMs: 20_000, message: 'the reset mail to reach the delivery log' });
    expect(await lookup(jobId)).toContainEqual(expect.objectContaining({ kind: 'mail-job', id: jobId, mailKind: expect.any(String), user: { id: member.id, name: member.name, email: member.email } }));

    const [event] = await admins.system.query<{ event_id: string; position: string; stream_id: string }>(
      `SELECT event_id, position, stream_id FROM events WHERE stream_id = $1 ORDER BY position LIMIT 1`, [`organization-${organizationId}`]);
    const asEvent = { kind: 'event', id: event!.event_id, position: Number(event!.position), streamId: event!.stream_id };
    expect(await lookup(event!.event_id)).toEqual([expect.objectContaining(asEvent)]);
    expect(await lookup(event!.position)).toEqual([expect.objectContaining(asEvent)]);
    expectCatalogueError(await ops('/ops/lookup?id=nothing-has-this-id'), 'NOT_FOUND');

    // A deleted user's id still names its history, without the name and email that went with it.
    const removed = await newUser('removed', '198.51.100.12');
    expect((await root.post('admin/remove-user', { userId: removed.id })).status).toBe(200);
    expect(await lookup(removed.id)).toEqual([{ kind: 'user', id: removed.id, user: { id: removed.id, name: null, email: null } }]);
  });
});

describe('the user page', () => {
  it('shows the user, accounts without secrets, organizations with roles, live sessions and the last sign-in', async () => {
    const user = await newUser('detailed', '198.51.100.20');
    const slug = `page-${Math.random().toString(36).slice(2, 10)}`;
    expect((await user.client.post('organization/create', { name: 'Page Org', slug })).status).toBe(200);
    expect((await user.client.post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);
    const page = await ops<OpsUserAnswer>(`/ops/users/${user.id}`, root);
    expect(page.status, page.text).toBe(200);
    expect(page.json.user).toMatchObject({ id: user.id, email: user.email, name: user.name, banned: false, banReason: null, banExpires: null, role: 'user' });
    expect(page.json.accounts).toEqual([expect.objectContaining({ providerId: 'credential', accountId: user.id, scopes: [] })]);
    expect(JSON.stringify(page.json.accounts)).not.toMatch(/password|token|\$argon2/i);
    expect(page.json.organizations).toEqual([expect.objectContaining({ name: 'Page Org', slug, role: 'owner' })]);
    expect(page.json.sessionCount).toBe(2);
    expect(page.json.lastSignInAt).not.toBeNull();
    expectCatalogueError(await ops('/ops/users/no-such-user'), 'USER_NOT_FOUND');
  });
});

describe('bulk actions', () => {
  it('bans users as the caller, refusing whom the rule for admins protects, and unbans them', async () => {
    const admin = await newRoleAdmin('bulk-admin');
    const otherAdmin = await newRoleAdmin('other-admin');
    const a = await newUser('bulk-a', '198.51.100.30');
    const b = await newUser('bulk-b', '198.51.100.31');
    const banned = await bulk(admin.client, { action: 'ban', userIds: [a.id, otherAdmin.id, b.id, 'no-such-user', admin.id], banReason: 'spam wave' });
    expect(banned.status, banned.text).toBe(200);
    expect(banned.json).toMatchObject({ action: 'ban', succeeded: 2, failed: 3 });
    expect(banned.json.results.map((r) => ({ id: r.user.id, ok: r.ok, code: r.code }))).toEqual([
      { id: a.id, ok: true, code: null },
      { id: otherAdmin.id, ok: false, code: 'YOU_CANNOT_ACT_ON_ADMINS' },
      { id: b.id, ok: true, code: null },
      { id: 'no-such-user', ok: false, code: 'USER_NOT_FOUND' },
      { id: admin.id, ok: false, code: 'YOU_CANNOT_BAN_YOURSELF' },
    ]);
    expect(banned.json.results[0]!.user).toEqual({ id: a.id, name: a.name, email: a.email });

    const refused = await new HttpClient(admins.system.authUrl).post('sign-in/email', { email: a.email, password: DEFAULT_PASSWORD });
    expectCatalogueError(refused, 'BANNED_USER');
    expect((await b.client.get('get-session')).json).toBeNull();
    expect((await ops<OpsUserAnswer>(`/ops/users/${a.id}`)).json.user).toMatchObject({ banned: true, banReason: 'spam wave', banExpires: null });

    const unbanned = await bulk(admin.client, { action: 'unban', userIds: [a.id, b.id] });
    expect(unbanned.json).toMatchObject({ succeeded: 2, failed: 0 });
    expect((await new HttpClient(admins.system.authUrl).post('sign-in/email', { email: a.email, password: DEFAULT_PASSWORD })).status).toBe(200);
  });

  it('revokes every session of several users, and lets the root admin act on admins', async () => {
    const a = await newUser('revoked-a', '198.51.100.40');
    const admin = await newRoleAdmin('revoked-admin');
    const revoked = await bulk(root, { action: 'revoke-sessions', userIds: [a.id, admin.id] });
    expect(revoked.json).toMatchObject({ action: 'revoke-sessions', succeeded: 2, failed: 0 });
    expect((await a.client.get('get-session')).json).toBeNull();
    expect((await admin.client.get('get-session')).json).toBeNull();
    expect((await sessions(`user=${a.id},${admin.id}`)).total).toBe(0);
  });

  it('takes at most 100 users', async () => {
    const userIds = Array.from({ length: 101 }, (_, i) => `user-${i}`);
    expectRefusal(await bulk(root, { action: 'unban', userIds }), 400, 'VALIDATION_ERROR');
  });
});
