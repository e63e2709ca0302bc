import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AuditEvent, ChainVerification, MailDelivery, MailQueue, ProjectionRebuild, ProjectionStatus } from '@portcullis/contracts';
import { startAdminSystem, type AdminSystem } from '../support/admin-system.ts';
import { DEFAULT_PASSWORD, expectCatalogueError, signUp, uniqueEmail } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { waitFor } from '../support/processes.ts';
import { describeWithRedis } from '../support/redis.ts';
import { HttpClient, type HttpResponse } from '../support/system.ts';

/**
 * What the ops console does besides reading: rebuild a projection, retry a dead letter, check the hash
 * chain, end to end over HTTP with an admin's session on the real api, projector and mailer (Redis's session
 * cache included), listening beyond loopback, where the ops endpoints want an operator.
 */
const SERVER_KEY = 'ops-operations-server-key-0123456789abcdef';
let admins: AdminSystem<MailSystem>;
let root: HttpClient;
/** Mail to these addresses is refused (550) while this is on. */
let refusing = true;

/** A client of the admin api; its Origin stays the system's, which the origin check trusts. */
function adminApiClient(): HttpClient {
  return new HttpClient(`${admins.adminUrl}/api/auth`, { origin: admins.system.baseUrl });
}

async function call<T>(method: 'GET' | 'POST', path: string, as: HttpClient | 'anonymous' = root): Promise<HttpResponse<T>> {
  const client = as === 'anonymous' ? adminApiClient() : as;
  return method === 'GET' ? client.get<T>(`${admins.adminUrl}${path}`) : client.post<T>(`${admins.adminUrl}${path}`, {});
}

async function ok<T>(method: 'GET' | 'POST', path: string): Promise<T> {
  const answer = await call<T>(method, path);
  expect(answer.status, answer.text).toBe(200);
  return answer.json;
}

describeWithRedis('ops console operations', () => {
  beforeAll(async () => {
    admins = await startAdminSystem(
      { redis: true, env: { HOST: '0.0.0.0', AUTH_SERVER_API_KEY: SERVER_KEY, AUTH_RATE_LIMIT_ENABLED: 'false' } },
      (options) => startMailSystem(options),
    );
    admins.system.smtp!.refuse = ({ to }) => (refusing && to.some((address) => address.startsWith('bounce-')) ? { code: 550, message: 'No such mailbox' } : null);
    root = adminApiClient();
    expect((await root.post('sign-in/email', { email: admins.rootEmail, password: DEFAULT_PASSWORD })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await admins?.stop();
  });

  it('refuses anonymous callers (401) and a non-admin\'s session (403)', async () => {
    const email = uniqueEmail('plain');
    await signUp(new HttpClient(admins.system.authUrl), { email });
    const plain = adminApiClient();
    expect((await plain.post('sign-in/email', { email, password: DEFAULT_PASSWORD })).status).toBe(200);
    const operations: ['GET' | 'POST', string][] = [
      ['GET', '/ops/projections'],
      ['POST', '/ops/projections/identity/rebuild'],
      ['GET', '/ops/mail/queue'],
      ['GET', '/ops/mail/deliveries'],
      ['GET', '/ops/mailbox'],
      ['POST', '/ops/mail/deliveries/00000000-0000-4000-8000-000000000000/retry'],
    ];
    for (const [method, path] of operations) {
      expectCatalogueError(await call(method, path, 'anonymous'), 'UNAUTHORIZED');
      expectCatalogueError(await call(method, path, plain), 'YOU_ARE_NOT_ALLOWED_TO_OPERATE');
    }
    for (const [method, path] of [['GET', '/ops/audit/verification'], ['POST', '/ops/audit/verify']] as const) {
      expectCatalogueError(await call(method, path, 'anonymous'), 'UNAUTHORIZED');
      expectCatalogueError(await call(method, path, plain), 'YOU_ARE_NOT_ALLOWED_TO_READ_THE_AUDIT_TRAIL');
    }
  });

  it('rebuilds the session cache and the session table while they serve, and they answer right after', async () => {
    const user = new HttpClient(admins.system.authUrl);
    const signedUp = await signUp(user, { email: uniqueEmail('served') });
    const listed = await ok<{ head: number; projections: ProjectionStatus[] }>('GET', '/ops/projections');
    for (const name of ['identity', 'sessions', 'organizations', 'session-cache', 'audit-index']) {
      const projection = listed.projections.find((p) => p.name === name);
      // The projector process holds each, on a connection of its own.
      expect(projection?.holder?.pid, name).toBeGreaterThan(0);
      expect(projection?.holder?.applicationName, name).toMatch(/^portcullis-projector pid \d+$/);
      expect(projection?.rebuildable, name).toBe(true);
    }
    expect(listed.projections.find((p) => p.name === 'session-cache')?.store).toBe('redis');

    for (const name of ['session-cache', 'sessions']) {
      const requested = await ok<{ rebuild: ProjectionRebuild; started: boolean }>('POST', `/ops/projections/${name}/rebuild`);
      expect(requested).toMatchObject({ started: true, rebuild: { projection: name, requestedBy: admins.rootId } });
      let rebuild: ProjectionRebuild | undefined;
      await waitFor(async () => ['succeeded', 'failed'].includes((rebuild = await ok<ProjectionRebuild>('GET', `/ops/projections/rebuilds/${requested.rebuild.id}`)).status), {
        timeoutMs: 60_000,
        message: `the ${name} rebuild to end\n${admins.system.projector.output().slice(-3000)}`,
      });
      expect(rebuild).toMatchObject({ status: 'succeeded', percent: 100, error: null });
      expect(rebuild!.position).toBe(rebuild!.head);
      expect(rebuild!.worker).toMatch(/:\d+$/);
      expect(Date.parse(rebuild!.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(rebuild!.startedAt!));
      // Right after the swap: the user's session still answers, and the admin still lists the user.
      const session = await user.get<{ user: { id: string } } | null>('get-session');
      expect(session.json?.user.id, session.text).toBe(signedUp.user.id);
      const users = await root.get<{ users: { id: string }[] }>(`admin/list-users?searchField=email&searchValue=${encodeURIComponent(signedUp.user.email)}&searchOperator=starts_with`);
      expect(users.json.users.map((u) => u.id), users.text).toContain(signedUp.user.id);
      const after = (await ok<{ projections: ProjectionStatus[] }>('GET', '/ops/projections')).projections.find((p) => p.name === name);
      expect(after?.rebuild?.id).toBe(requested.rebuild.id);
    }
    // A sign-out after the swaps reaches the rebuilt read models: the session is refused.
    expect((await user.post('sign-out', {})).status).toBe(200);
    expect((await user.get('get-session')).json).toBeNull();
  });

  it('does not rebuild the erasure projection, nor a projection it does not know', async () => {
    expectCatalogueError(await call('POST', '/ops/projections/erasure/rebuild'), 'PROJECTION_CANNOT_BE_REBUILT');
    expectCatalogueError(await call('POST', '/ops/projections/no-such-projection/rebuild'), 'PROJECTION_NOT_FOUND');
  });

  it('retries a dead letter once the SMTP server takes it again, and sends it', async () => {
    const email = uniqueEmail('bounce');
    await signUp(new HttpClient(admins.system.authUrl), { email });
    expect((await new HttpClient(admins.system.authUrl).post('request-password-reset', { email })).status).toBe(200);
    let dead: MailDelivery | undefined;
    await waitFor(async () => (dead = (await ok<{ deliveries: MailDelivery[] }>('GET', `/ops/mail/deliveries?status=dead&to=${encodeURIComponent(email)}`)).deliveries[0]) !== undefined, {
      timeoutMs: 30_000,
      message: `the reset mail to ${email} to be dead-lettered`,
    });
    expect(dead).toMatchObject({ kind: 'password-reset', to: email, attempts: 1 });
    expect(dead!.lastError).toContain('550');
    expect((await ok<MailQueue>('GET', '/ops/mail/queue')).dead).toBeGreaterThanOrEqual(1);
    expect(admins.system.smtp!.mails.some((mail) => mail.jobId === dead!.jobId)).toBe(false);

    refusing = false;
    expect(await ok('POST', `/ops/mail/deliveries/${dead!.jobId}/retry`)).toMatchObject({ jobId: dead!.jobId });
    let sent: MailDelivery | undefined;
    await waitFor(async () => (sent = (await ok<{ deliveries: MailDelivery[] }>('GET', `/ops/mail/deliveries?jobId=${dead!.jobId}`)).deliveries[0])?.status === 'sent', {
      timeoutMs: 30_000,
      message: `the retried mail to be sent\n${admins.system.mailer.output().slice(-3000)}`,
    });
    expect(sent).toMatchObject({ attempts: 1, deadAt: null });
    const received = admins.system.smtp!.mails.filter((mail) => mail.jobId === dead!.jobId);
    expect(received.map((mail) => mail.to)).toEqual([[email.toLowerCase()]]);
    expectCatalogueError(await call('POST', `/ops/mail/deliveries/${dead!.jobId}/retry`), 'MAIL_DELIVERY_NOT_DEAD');

    // The audit trail says which admin asked.
    const audit = await ok<{ events: AuditEvent[] }>('GET', `/ops/audit/events?type=mail.retry_requested.v1&stream=mail-${dead!.jobId}`);
    expect(audit.events.map((event) => event.actor)).toEqual([{ kind: 'admin', id: admins.rootId }]);
  });

  it('checks the hash chain in the background and answers the last check', async () => {
    const started = await ok<{ verification: ChainVerification; started: boolean }>('POST', '/ops/audit/verify');
    expect(started).toMatchObject({ started: true, verification: { source: 'api', status: 'running' } });
    type Checks = { latest: ChainVerification | null; lastFinished: ChainVerification | null };
    let last: Checks | undefined;
    await waitFor(async () => (last = await ok<Checks>('GET', '/ops/audit/verification')).lastFinished?.id === started.verification.id, {
      timeoutMs: 60_000,
      message: 'the hash-chain check to finish',
    });
    expect(last!.lastFinished).toMatchObject({ status: 'intact', percent: 100, failure: null });
    expect(last!.lastFinished!.verifiedTo).toBeGreaterThan(0);
  });
});
