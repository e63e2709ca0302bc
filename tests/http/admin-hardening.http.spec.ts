import { createAuthClient } from 'better-auth/client';
import { organizationClient } from 'better-auth/client/plugins';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue, type AuditEvent, type ErrorCode } from '@portcullis/contracts';
import { startAdminSystem, type AdminAuthClient, type AdminSystem } from '../support/admin-system.ts';
import { DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { cookieJarFetch } from '../support/better-auth-fetch.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { waitFor } from '../support/processes.ts';
import { testRedisUrl } from '../support/redis.ts';

/**
 * The holes issue 41 found by probing the admin plugin and the audit trail from outside, each closed: in
 * listening beyond loopback (where the ops endpoints want an operator), two api processes on one log (the second naming the root admin in ADMIN_USER_IDS), the
 * mailer on the dev mailbox, Redis where reachable; through better-auth's own admin and organization
 * clients, and plain HTTP for the ops endpoints.
 */
const SERVER_KEY = 'hardening-server-key-0123456789abcdef';
let admins: AdminSystem<MailSystem>;

beforeAll(async () => {
  admins = await startAdminSystem(
    { redis: testRedisUrl() !== null, env: { HOST: '0.0.0.0', AUTH_SERVER_API_KEY: SERVER_KEY } },
    (options) => startMailSystem({ ...options, smtp: false }),
  );
}, 120_000);

afterAll(async () => {
  await admins?.stop();
});

interface Person {
  readonly id: string;
  readonly email: string;
  /** Signed in on the users' api. */
  readonly client: AdminAuthClient;
}

async function newUser(label: string): Promise<Person> {
  const client = admins.client('users');
  const email = uniqueEmail(label);
  const signedUp = await client.signUp.email({ email, password: DEFAULT_PASSWORD, name: label });
  expect(signedUp.error).toBeNull();
  return { id: signedUp.data!.user.id, email, client };
}

/**
 * A user the root admin gives the `admin` role, signed in on the users' api or on the admin api (only the
 * latter knows the root admin for one: ADMIN_USER_IDS is its own).
 */
async function newRoleAdmin(label: string, on: 'users' | 'admin' = 'users'): Promise<Person> {
  const root = await admins.signedInRoot();
  const email = uniqueEmail(label);
  const created = await root.admin.createUser({ email, password: DEFAULT_PASSWORD, name: label, role: 'admin' });
  expect(created.error).toBeNull();
  const client = admins.client(on);
  expect((await client.signIn.email({ email, password: DEFAULT_PASSWORD })).error).toBeNull();
  return { id: created.data!.user.id, email, client };
}

function expectRefused(answer: { error: unknown }, code: ErrorCode): void {
  const { status, message } = errorCatalogue[code];
  expect(answer.error, code).toMatchObject({ status, message });
}

/** An ops endpoint, as a server with the key (or with the cookies given instead). */
async function ops<T>(path: string, options: { cookies?: string } = {}): Promise<{ status: number; json: T }> {
  const headers: Record<string, string> = options.cookies !== undefined ? { cookie: options.cookies } : { 'x-api-key': SERVER_KEY };
  const response = await fetch(`${admins.adminUrl}${path}`, { headers });
  return { status: response.status, json: (await response.json()) as T };
}

type AuditPage = { events: AuditEvent[]; nextCursor: number | null; indexedTo: number };

/** Audit events matching a query, once the audit index (which trails the log by up to 200 ms) holds `count` of them. */
async function auditEvents(query: string, count: number): Promise<AuditEvent[]> {
  let events: AuditEvent[] = [];
  await waitFor(
    async () => {
      const page = await ops<AuditPage>(`/ops/audit/events?${query}`);
      expect(page.status, JSON.stringify(page.json)).toBe(200);
      events = page.json.events;
      return events.length >= count;
    },
    { timeoutMs: 10_000, message: `${count} audit events for ${query}` },
  );
  return events;
}

describe('who did it, through an impersonation', () => {
  it('names the admin behind an impersonation session in every event it causes, found by search and said in the sentence', async () => {
    const user = await newUser('impersonated');
    const root = await admins.signedInRoot();
    expect((await root.admin.impersonateUser({ userId: user.id })).error).toBeNull();
    expect((await root.updateUser({ name: 'Renamed by support' })).error).toBeNull();
    expect((await root.admin.stopImpersonating()).error).toBeNull();

    const types = 'session.impersonation_started.v1,user.updated.v1,session.revoked.v2';
    const byRoot = await auditEvents(`actor=${admins.rootId}&user=${user.id}&type=${types}&order=oldest`, 3);
    expect(byRoot.map((e) => e.type)).toEqual(['session.impersonation_started.v1', 'user.updated.v1', 'session.revoked.v2']);
    const [started, updated, ended] = byRoot;
    expect(started!.actor).toEqual({ kind: 'admin', id: admins.rootId });
    expect(started!.sentence).toBe(`${admins.rootEmail} (as admin) started impersonating ${user.email} from 127.0.0.1`);
    expect(updated!.actor).toEqual({ kind: 'impersonator', id: user.id, impersonatorId: admins.rootId });
    expect(updated!.sentence).toBe(`${user.email} (${admins.rootEmail} impersonating) updated the profile of ${user.email} from 127.0.0.1`);
    // Stopping is the admin's act through the session it ends, not the admin impersonating themself.
    expect(ended!.actor).toEqual({ kind: 'impersonator', id: user.id, impersonatorId: admins.rootId });

    const impersonations = await auditEvents(`actorKind=impersonator&user=${user.id}`, 2);
    expect(impersonations.every((e) => e.actor.impersonatorId === admins.rootId)).toBe(true);
  });

  it('refuses admin actions from an impersonation session (another impersonation among them) and leaves it the reads of the user it shows', async () => {
    const admin = await newRoleAdmin('impersonated-admin');
    const user = await newUser('bystander');
    const root = await admins.signedInRoot();
    expect((await root.admin.impersonateUser({ userId: admin.id })).error).toBeNull();

    expectRefused(await root.admin.impersonateUser({ userId: user.id }), 'YOU_CANNOT_ACT_AS_ADMIN_WHILE_IMPERSONATING');
    expectRefused(await root.admin.banUser({ userId: user.id }), 'YOU_CANNOT_ACT_AS_ADMIN_WHILE_IMPERSONATING');
    expectRefused(await root.admin.setUserPassword({ userId: user.id, newPassword: 'taken over by someone' }), 'YOU_CANNOT_ACT_AS_ADMIN_WHILE_IMPERSONATING');
    // Reads keep the rights of the impersonated admin.
    expect((await root.admin.listUsers({ query: { limit: 1 } })).error).toBeNull();
    // The audit trail is read in one's own session.
    const audit = await ops<{ code: string }>('/ops/audit/events?limit=1', { cookies: admins.cookiesOf(root) });
    expect(audit).toMatchObject({ status: 403, json: { code: 'YOU_ARE_NOT_ALLOWED_TO_READ_THE_AUDIT_TRAIL' } });

    expect((await root.admin.stopImpersonating()).error).toBeNull();
    expect((await root.admin.getUser({ query: { id: user.id } })).data).toMatchObject({ banned: false });
    expect((await ops('/ops/audit/events?limit=1', { cookies: admins.cookiesOf(root) })).status).toBe(200);
  });
});

describe('admins against admins', () => {
  it('lets a role admin act on non-admins only, on no other admin and not on the root admin', async () => {
    const actor = await newRoleAdmin('acting-admin', 'admin');
    const other = await newRoleAdmin('other-admin');
    const otherSessions = await actor.client.admin.listUserSessions({ userId: other.id });
    const otherSession = otherSessions.data!.sessions[0]!.token;
    for (const target of [other.id, admins.rootId]) {
      const a = actor.client.admin;
      expectRefused(await a.setUserPassword({ userId: target, newPassword: 'i now know your password' }), 'YOU_CANNOT_ACT_ON_ADMINS');
      expectRefused(await a.banUser({ userId: target }), 'YOU_CANNOT_ACT_ON_ADMINS');
      expectRefused(await a.unbanUser({ userId: target }), 'YOU_CANNOT_ACT_ON_ADMINS');
      expectRefused(await a.removeUser({ userId: target }), 'YOU_CANNOT_ACT_ON_ADMINS');
      expectRefused(await a.setRole({ userId: target, role: 'user' }), 'YOU_CANNOT_ACT_ON_ADMINS');
      expectRefused(await a.revokeUserSessions({ userId: target }), 'YOU_CANNOT_ACT_ON_ADMINS');
      expectRefused(await a.updateUser({ userId: target, data: { name: 'Renamed' } }), 'YOU_CANNOT_ACT_ON_ADMINS');
      expectRefused(await a.impersonateUser({ userId: target }), 'YOU_CANNOT_IMPERSONATE_ADMINS');
    }
    expectRefused(await actor.client.admin.revokeUserSession({ sessionToken: otherSession }), 'YOU_CANNOT_ACT_ON_ADMINS');
    // Nothing of it took: the other admin's password and session are theirs.
    expect((await other.client.getSession()).data?.user.id).toBe(other.id);
    expect((await admins.client('users').signIn.email({ email: other.email, password: DEFAULT_PASSWORD })).error).toBeNull();

    const user = await newUser('managed-by-role-admin');
    expect((await actor.client.admin.setUserPassword({ userId: user.id, newPassword: 'a password set by an admin' })).error).toBeNull();
    expect((await actor.client.admin.updateUser({ userId: user.id, data: { name: 'Renamed' } })).error).toBeNull();
    expect((await actor.client.admin.banUser({ userId: user.id })).error).toBeNull();
  });

  it('lets the root admin act on admins, and nobody lock themself out', async () => {
    const root = await admins.signedInRoot();
    const admin = await newRoleAdmin('demoted-admin');
    expectRefused(await admin.client.admin.banUser({ userId: admin.id }), 'YOU_CANNOT_BAN_YOURSELF');
    expectRefused(await admin.client.admin.removeUser({ userId: admin.id }), 'YOU_CANNOT_REMOVE_YOURSELF');
    expectRefused(await admin.client.admin.setRole({ userId: admin.id, role: 'user' }), 'YOU_CANNOT_REMOVE_YOUR_OWN_ADMIN_ROLE');
    expectRefused(await admin.client.admin.updateUser({ userId: admin.id, data: { role: 'user' } }), 'YOU_CANNOT_REMOVE_YOUR_OWN_ADMIN_ROLE');
    // What does not lock one out stays one's own business.
    expect((await admin.client.admin.updateUser({ userId: admin.id, data: { name: 'Still Admin' } })).error).toBeNull();

    expect((await root.admin.setRole({ userId: admin.id, role: 'user' })).data?.user.role).toBe('user');
    expectRefused(await admin.client.admin.listUsers({ query: {} }), 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS');
    expectRefused(await root.admin.banUser({ userId: admins.rootId }), 'YOU_CANNOT_BAN_YOURSELF');
    // The root admin's rights are the list's, whatever its role says: dropping the role locks nothing.
    expect((await root.admin.setRole({ userId: admins.rootId, role: 'user' })).error).toBeNull();
    expect((await root.admin.listUsers({ query: { limit: 1 } })).error).toBeNull();
  });
});

describe('an admin\'s fall ends what they opened', () => {
  /** A role admin impersonating a fresh user on the users' api, and the client holding that impersonation session. */
  async function impersonating(label: string): Promise<{ admin: Person; user: Person }> {
    const admin = await newRoleAdmin(label);
    const user = await newUser(`${label}-target`);
    expect((await admin.client.admin.impersonateUser({ userId: user.id })).error).toBeNull();
    expect((await admin.client.getSession()).data?.session.impersonatedBy).toBe(admin.id);
    return { admin, user };
  }

  it('ends the impersonation sessions of an admin who is banned, removed, or has their password set', async () => {
    const root = await admins.signedInRoot();
    const banned = await impersonating('banned-admin');
    const removed = await impersonating('removed-admin');
    const reset = await impersonating('reset-admin');

    expect((await root.admin.banUser({ userId: banned.admin.id })).error).toBeNull();
    expect((await root.admin.removeUser({ userId: removed.admin.id })).error).toBeNull();
    expect((await root.admin.setUserPassword({ userId: reset.admin.id, newPassword: 'the admin\'s new password' })).error).toBeNull();
    // Answered once ended everywhere: the other api process answers none of them.
    for (const { admin } of [banned, removed, reset]) expect((await admin.client.getSession({ query: { disableCookieCache: true } })).data).toBeNull();
    // The users themselves keep their own sessions.
    expect((await banned.user.client.getSession()).data?.user.id).toBe(banned.user.id);
  });

  it('ends them when the admin resets their password through a mailed link', async () => {
    const { admin } = await impersonating('link-reset-admin');
    const anonymous = admins.client('users');
    expect((await anonymous.requestPasswordReset({ email: admin.email, redirectTo: '/reset' })).error).toBeNull();
    let token = '';
    await waitFor(
      async () => {
        const mailbox = await ops<{ messages: Array<{ text: string }> }>(`/ops/mailbox?to=${encodeURIComponent(admin.email)}`);
        token = /\/reset-password\/([A-Za-z0-9]{24})/.exec(mailbox.json.messages.map((m) => m.text).join('\n'))?.[1] ?? '';
        return token !== '';
      },
      { timeoutMs: 20_000, message: 'the reset mail in the dev mailbox' },
    );
    expect((await anonymous.resetPassword({ newPassword: 'a brand new password', token })).error).toBeNull();
    expect((await admin.client.getSession({ query: { disableCookieCache: true } })).data).toBeNull();
  });
});

describe('bad input is a catalogued 400', () => {
  it('refuses NUL in every audit and mailbox filter and path id', async () => {
    for (const filter of ['user', 'stream', 'type', 'typePrefix', 'organization', 'actor']) {
      for (const endpoint of ['events', 'export']) {
        const answer = await ops<{ code: string; message: string }>(`/ops/audit/${endpoint}?${filter}=a%00b`);
        expect(answer, `${endpoint} ${filter}`).toMatchObject({ status: 400, json: { code: 'INVALID_QUERY_PARAMETERS', message: 'Invalid query parameters' } });
      }
    }
    for (const path of ['/ops/audit/users/a%00b', '/ops/audit/organizations/%00']) {
      expect(await ops(path), path).toMatchObject({ status: 400, json: { code: 'VALIDATION_ERROR' } });
    }
    expect(await ops('/ops/mailbox?to=%00')).toMatchObject({ status: 400, json: { code: 'INVALID_QUERY_PARAMETERS' } });
  });

  it('refuses a ban past any storable date, and user ids that are null, lists or objects', async () => {
    const root = await admins.signedInRoot();
    const user = await newUser('bad-input');
    for (const banExpiresIn of [1e20, Number.MAX_SAFE_INTEGER, 1e10]) {
      expectRefused(await root.admin.banUser({ userId: user.id, banExpiresIn }), 'VALIDATION_ERROR');
    }
    expectRefused(await root.admin.updateUser({ userId: user.id, data: { banned: true, banExpires: '+275760-09-13T00:00:00.000Z' } }), 'VALIDATION_ERROR');
    for (const userId of [null, [user.id], { id: user.id }] as unknown as string[]) {
      expectRefused(await root.admin.listUserSessions({ userId }), 'VALIDATION_ERROR');
      expectRefused(await root.admin.revokeUserSessions({ userId }), 'VALIDATION_ERROR');
    }
    // A number is a user id sent as one, as better-auth coerces it.
    expect((await root.admin.listUserSessions({ userId: 12345 })).data).toEqual({ sessions: [] });
    expect((await root.admin.getUser({ query: { id: user.id } })).data).toMatchObject({ banned: false });
  });

  it('bounds list-users pages as the audit search does', async () => {
    const root = await admins.signedInRoot();
    for (const limit of ['1000000000', '-1', '1e9', '501']) {
      expectRefused(await root.admin.listUsers({ query: { limit } }), 'INVALID_QUERY_PARAMETERS');
    }
    expectRefused(await root.admin.listUsers({ query: { offset: '-1' } }), 'INVALID_QUERY_PARAMETERS');
    expect((await root.admin.listUsers({ query: { limit: 500 } })).error).toBeNull();
  });
});

describe('organizations that look alike', () => {
  function organizationOwner() {
    const { fetchOptions } = cookieJarFetch(admins.system);
    return createAuthClient({ baseURL: admins.system.baseUrl, fetchOptions, plugins: [organizationClient()] });
  }

  it('refuses slugs that normalize to a taken one as taken, and slugs outside the pattern; logos follow the image rule', async () => {
    const owner = organizationOwner();
    expect((await owner.signUp.email({ email: uniqueEmail('slug-owner'), password: DEFAULT_PASSWORD, name: 'Owner' })).error).toBeNull();
    const slug = `alpha-${Date.now()}`;
    const created = await owner.organization.create({ name: 'Alpha', slug: slug.toUpperCase() });
    expect(created.data?.slug).toBe(slug);
    for (const lookAlike of [slug.toUpperCase(), `${slug} `, ` ${slug}`, [...slug].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join('')]) {
      expectRefused(await owner.organization.create({ name: 'Phish', slug: lookAlike }), 'ORGANIZATION_ALREADY_EXISTS');
      expectRefused(await owner.organization.checkSlug({ slug: lookAlike }), 'ORGANIZATION_SLUG_ALREADY_TAKEN');
    }
    for (const invalid of ['../x', 'a/b', 'café', 'a--b', '-a', '']) {
      expectRefused(await owner.organization.create({ name: 'Bad', slug: invalid }), 'VALIDATION_ERROR');
    }
    expectRefused(await owner.organization.create({ name: 'Logo', slug: `logo-${Date.now()}`, logo: 'javascript:alert(1)' }), 'VALIDATION_ERROR');
    expectRefused(await owner.organization.update({ organizationId: created.data!.id, data: { logo: 'javascript:alert(1)' } }), 'VALIDATION_ERROR');
    expect((await owner.organization.update({ organizationId: created.data!.id, data: { logo: 'https://cdn.example/logo.png' } })).error).toBeNull();
    const found = await owner.organization.getFullOrganization({ query: { organizationSlug: slug.toUpperCase() } });
    expect(found.data?.id).toBe(created.data!.id);
  });
});

describe('smaller holes', () => {
  it('keeps only a W3C traceparent in event metadata', async () => {
    const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const signUp = async (traceparent: string): Promise<string> => {
      const email = uniqueEmail('traced');
      const response = await fetch(`${admins.system.authUrl}/sign-up/email`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: admins.system.baseUrl, traceparent },
        body: JSON.stringify({ email, password: DEFAULT_PASSWORD, name: 'Traced' }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { user: { id: string } }).user.id;
    };
    const stored = async (userId: string) =>
      (await admins.system.query<{ traceparent: string | null }>(
        `SELECT metadata->>'traceparent' AS traceparent FROM events WHERE type = 'user.registered.v1' AND data->>'userId' = $1`,
        [userId],
      ))[0]!.traceparent;
    expect(await stored(await signUp(valid))).toBe(valid);
    expect(await stored(await signUp('<script>alert(1)</script>'))).toBeNull();
    expect(await stored(await signUp(`${valid}-and-more`))).toBeNull();
  });

  it('matches an IPv4 event by its IPv4-mapped IPv6 spelling, and takes a date alone as midnight UTC', async () => {
    const user = await newUser('addressed');
    // Clients of this test reach the api over loopback: their events carry 127.0.0.1.
    const plain = await auditEvents(`user=${user.id}&ip=127.0.0.1`, 1);
    for (const ip of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:127.0.0.0/104', '127.0.0.0/8']) {
      const mapped = await ops<AuditPage>(`/ops/audit/events?user=${user.id}&ip=${encodeURIComponent(ip)}`);
      expect(mapped.status, ip).toBe(200);
      expect(mapped.json.events.map((e) => e.position), ip).toEqual(plain.map((e) => e.position));
    }
    const day = plain[0]!.recordedAt.slice(0, 10);
    const nextDay = new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10);
    expect((await ops<AuditPage>(`/ops/audit/events?user=${user.id}&ip=127.0.0.1&from=${day}&to=${nextDay}`)).json.events.length).toBe(plain.length);
    expect((await ops<AuditPage>(`/ops/audit/events?user=${user.id}&to=${day}`)).json.events).toEqual([]);
  });
});
