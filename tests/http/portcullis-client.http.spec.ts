import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createAuthClient, createOpsClient, opsClientEndpoints, type OpsClient } from '@portcullis/client';
import type { ProjectionRebuild } from '@portcullis/contracts';
import { errorCatalogue, wireCode, type ErrorCode } from '@portcullis/contracts/errors/index';
import { DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { cookieJarFetch } from '../support/better-auth-fetch.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { waitFor } from '../support/processes.ts';

/**
 * @portcullis/client against the real api, projector and mailer: better-auth's client with the plugins it
 * comes with (usernames, organizations with teams, admin), and the typed ops client with an admin's session
 * and with the server key, on an api listening beyond loopback, where the ops endpoints want an operator.
 */
const SERVER_KEY = 'portcullis-client-server-key-0123456789abcdef';
const ADMIN_EMAIL = 'client-package-admin@example.com';
const ADMIN_PASSWORD = 'client package admin password';

function operatorEnv(): Record<string, string> {
  return { HOST: '0.0.0.0', AUTH_SERVER_API_KEY: SERVER_KEY, AUTH_BOOTSTRAP_ADMIN_EMAIL: ADMIN_EMAIL, AUTH_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD };
}

/** A preconfigured client with a cookie jar of its own (node's fetch keeps none). */
function authClientOf(system: MailSystem) {
  return createAuthClient({ baseURL: system.baseUrl, fetchOptions: cookieJarFetch(system).fetchOptions });
}

/** The rejection of `call`, which must be the catalogue's `code` with its status and message. */
async function expectRefusal(call: Promise<unknown>, code: ErrorCode): Promise<ApiError> {
  const error = await call.then(
    () => null,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toMatchObject({ status: errorCatalogue[code].status, code: wireCode(code), message: errorCatalogue[code].message });
  return error as ApiError;
}

describe('@portcullis/client against the real system', () => {
  let system: MailSystem;
  /** Mail to bounce- addresses is refused (550) while this is on. */
  let refusing = true;
  let adminToken: string;

  beforeAll(async () => {
    system = await startMailSystem({ env: operatorEnv() });
    system.smtp!.refuse = ({ to }) => (refusing && to.some((address) => address.startsWith('bounce-')) ? { code: 550, message: 'No such mailbox' } : null);
    const signedIn = await authClientOf(system).signIn.email({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    if (!signedIn.data) throw new Error(`the bootstrap admin could not sign in: ${JSON.stringify(signedIn.error)}`);
    adminToken = signedIn.data.token;
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
  });

  const asAdmin = (): OpsClient => createOpsClient({ baseURL: system.baseUrl, auth: { type: 'Bearer', token: adminToken } });
  const withKey = (): OpsClient => createOpsClient({ baseURL: system.baseUrl, apiKey: SERVER_KEY });

  it('signs up with a username and in by it, and keeps organizations and teams, through the preconfigured client', async () => {
    const email = uniqueEmail('client-package');
    const username = `cp_${randomBytes(4).toString('hex')}`;
    const up = await authClientOf(system).signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Client Package', username });
    expect(up.error).toBeNull();

    const client = authClientOf(system);
    const signedIn = await client.signIn.username({ username, password: DEFAULT_PASSWORD });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data?.user).toMatchObject({ id: up.data?.user.id, email, username });
    const wrong = await authClientOf(system).signIn.username({ username, password: 'not the password' });
    expect(wrong.error).toMatchObject({ status: 401, statusText: 'Unauthorized', code: wireCode('INVALID_USERNAME_OR_PASSWORD') });

    const slug = `client-package-${randomBytes(4).toString('hex')}`;
    const created = await client.organization.create({ name: 'Client Package Org', slug });
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({ name: 'Client Package Org', slug, members: [{ userId: up.data?.user.id, role: 'owner' }] });
    const organizationId = created.data!.id;
    expect((await client.organization.list()).data?.map((o) => o.slug)).toContain(slug);

    const team = await client.organization.createTeam({ name: 'Core', organizationId });
    expect(team.error).toBeNull();
    const teams = await client.organization.listTeams({ query: { organizationId } });
    expect(teams.data?.map((t) => t.name).sort()).toEqual(expect.arrayContaining(['Core']));

    const again = await client.organization.create({ name: 'Client Package Org', slug });
    expect(again.error).toMatchObject({
      status: errorCatalogue.ORGANIZATION_ALREADY_EXISTS.status,
      code: wireCode('ORGANIZATION_ALREADY_EXISTS'),
      message: errorCatalogue.ORGANIZATION_ALREADY_EXISTS.message,
    });
  });

  it('administers users through the admin plugin, and a plain user is refused with the catalogue\'s code', async () => {
    const email = uniqueEmail('client-banned');
    const user = authClientOf(system);
    const up = await user.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'To Ban' });
    expect(up.error).toBeNull();

    const admin = authClientOf(system);
    expect((await admin.signIn.email({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD })).error).toBeNull();
    const listed = await admin.admin.listUsers({ query: { searchValue: email, searchField: 'email' } });
    expect(listed.data).toMatchObject({ total: 1, users: [{ id: up.data?.user.id, email }] });
    expect((await admin.admin.banUser({ userId: up.data!.user.id, banReason: 'client package test' })).error).toBeNull();
    const refused = await authClientOf(system).signIn.email({ email, password: DEFAULT_PASSWORD });
    expect(refused.error).toMatchObject({ status: errorCatalogue.BANNED_USER.status, code: wireCode('BANNED_USER') });
    expect((await admin.admin.unbanUser({ userId: up.data!.user.id })).error).toBeNull();
    // The ban ended the user's sessions; signed in again, they are a plain user.
    expect((await user.signIn.email({ email, password: DEFAULT_PASSWORD })).error).toBeNull();

    const plain = await user.admin.listUsers({ query: {} });
    expect(plain.error).toMatchObject({ status: 403, code: wireCode('YOU_ARE_NOT_ALLOWED_TO_LIST_USERS') });
  });

  it('searches, exports and travels through the audit trail with an admin\'s session', async () => {
    const client = authClientOf(system);
    const up = await client.signUp.email({ email: uniqueEmail('client-audit'), password: DEFAULT_PASSWORD, name: 'Before' });
    const userId = up.data!.user.id;
    expect((await client.updateUser({ name: 'After' })).error).toBeNull();
    const ops = asAdmin();

    let history: Awaited<ReturnType<OpsClient['auditUserHistory']>> | undefined;
    await waitFor(async () => ((history = await ops.auditUserHistory({ params: { id: userId } })).points.length >= 2), {
      timeoutMs: 20_000,
      message: 'the audit index to have the user\'s sign-up and rename',
    });
    const first = history!.points[0]!;
    const last = history!.points.at(-1)!;
    const then = await ops.auditUserAt({ params: { id: userId }, query: { at: String(first.position) } });
    expect(then).toMatchObject({ id: userId, position: first.position, state: { profile: { name: 'Before' } } });
    const now = await ops.auditUserAt({ params: { id: userId }, query: { at: String(last.position), diffFrom: String(first.position) } });
    expect(now.state).toMatchObject({ profile: { name: 'After' } });
    expect(now.diff?.changes).toContainEqual(expect.objectContaining({ before: 'Before', after: 'After' }));

    // The search reads the audit index, a projection of its own, which may still trail the history above.
    let search: Awaited<ReturnType<OpsClient['auditEvents']>> | undefined;
    await waitFor(async () => ((search = await ops.auditEvents({ query: { user: userId, order: 'oldest' } })).events.length >= 2), {
      timeoutMs: 20_000,
      message: 'the audit search to find the user\'s sign-up and rename',
    });
    expect(search!.people[userId]).toMatchObject({ name: 'After' });
    const exported = await ops.auditExportEvents({ query: { user: userId, order: 'oldest' } });
    expect(exported.map((event) => event.eventId)).toEqual(search!.events.map((event) => event.eventId));
    expect(await ops.auditExport({ query: { user: userId, order: 'oldest' } })).toContain(search!.events[0]!.eventId);
    expect(ops.urlOf(opsClientEndpoints.auditExport, { query: { user: [userId, 'other'] } })).toBe(`${system.baseUrl}/ops/audit/export?user=${userId}%2Cother`);
  });

  it('rebuilds a projection with the server key and follows its progress to the end', async () => {
    const ops = withKey();
    const listed = await ops.listProjections();
    expect(listed.projections.find((p) => p.name === 'identity')).toMatchObject({ store: 'postgres', rebuildable: true });

    const { rebuild } = await ops.rebuildProjection({ params: { name: 'identity' } });
    expect(rebuild).toMatchObject({ projection: 'identity', requestedBy: null });
    const readings: ProjectionRebuild[] = [];
    for await (const reading of ops.followRebuild(rebuild.id, { intervalMs: 100 })) readings.push(reading);
    expect(readings.at(-1)).toMatchObject({ id: rebuild.id, status: 'succeeded', error: null });
    expect(readings.slice(0, -1).every((reading) => reading.status === 'requested' || reading.status === 'running')).toBe(true);
    expect(await ops.projectionRebuild({ params: { id: rebuild.id } })).toMatchObject({ status: 'succeeded' });
  });

  it('finds a dead letter in the delivery log and retries it, with the server key', async () => {
    const email = uniqueEmail('bounce');
    const user = authClientOf(system);
    expect((await user.signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Bounce' })).error).toBeNull();
    expect((await authClientOf(system).requestPasswordReset({ email })).error).toBeNull();
    const ops = withKey();

    let dead: Awaited<ReturnType<OpsClient['mailDeliveries']>>['deliveries'][number] | undefined;
    await waitFor(async () => (dead = (await ops.mailDeliveries({ query: { status: 'dead', to: email } })).deliveries[0]) !== undefined, {
      timeoutMs: 30_000,
      message: `the reset mail to ${email} to be dead-lettered`,
    });
    expect(dead).toMatchObject({ kind: 'password-reset', to: email, status: 'dead' });
    expect((await ops.mailQueue()).dead).toBeGreaterThanOrEqual(1);

    refusing = false;
    expect(await ops.retryMailDelivery({ params: { jobId: dead!.jobId } })).toMatchObject({ jobId: dead!.jobId });
    await waitFor(async () => (await ops.mailDeliveries({ query: { jobId: dead!.jobId } })).deliveries[0]?.status === 'sent', {
      timeoutMs: 30_000,
      message: 'the retried mail to be sent',
    });
    await expectRefusal(ops.retryMailDelivery({ params: { jobId: dead!.jobId } }), 'MAIL_DELIVERY_NOT_DEAD');
  });

  it('answers refusals as ApiErrors with the catalogue\'s code, status and statusText', async () => {
    const anonymous = createOpsClient({ baseURL: system.baseUrl });
    const unauthorized = await expectRefusal(anonymous.listProjections(), 'UNAUTHORIZED');
    expect(unauthorized.statusText).toBe('Unauthorized');

    const up = await authClientOf(system).signUp.email({ email: uniqueEmail('client-plain'), password: DEFAULT_PASSWORD, name: 'Plain' });
    const plain = createOpsClient({ baseURL: system.baseUrl, auth: { type: 'Bearer', token: up.data!.token ?? undefined } });
    const forbidden = await expectRefusal(plain.mailQueue(), 'YOU_ARE_NOT_ALLOWED_TO_OPERATE');
    expect(forbidden.statusText).toBe('Forbidden');
    await expectRefusal(plain.auditEvents(), 'YOU_ARE_NOT_ALLOWED_TO_READ_THE_AUDIT_TRAIL');
  });
});

describe('the dev mailbox through the ops client', () => {
  let system: MailSystem;

  beforeAll(async () => {
    system = await startMailSystem({ smtp: false, env: operatorEnv() });
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('shows the mail the embedded default delivered without SMTP, to the server key', async () => {
    const email = uniqueEmail('client-mailbox');
    expect((await authClientOf(system).signUp.email({ email, password: DEFAULT_PASSWORD, name: 'Mailbox' })).error).toBeNull();
    expect((await authClientOf(system).requestPasswordReset({ email, redirectTo: '/reset' })).error).toBeNull();
    const ops = createOpsClient({ baseURL: system.baseUrl, apiKey: SERVER_KEY, retry: { type: 'linear', attempts: 2, delay: 100 } });

    let messages: Awaited<ReturnType<OpsClient['mailbox']>>['messages'] = [];
    await waitFor(async () => (messages = (await ops.mailbox({ query: { to: email } })).messages).length > 0, {
      timeoutMs: 30_000,
      message: `the reset mail to ${email} in the dev mailbox`,
    });
    expect(messages).toEqual([expect.objectContaining({ to: email })]);
    expect(messages[0]!.text).toContain('/reset-password/');
  });
});
