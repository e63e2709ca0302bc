import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opsOverviewSchema } from '@portcullis/contracts';
import { parsePrometheusText, type PrometheusSample } from '@portcullis/platform/telemetry/prometheus-text';
import { startAdminSystem, type AdminSystem } from '../support/admin-system.ts';
import { DEFAULT_PASSWORD, signUp } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { waitFor } from '../support/processes.ts';
import { HttpClient, type HttpResponse } from '../support/system.ts';

/**
 * The figures every process serves and the overview the console draws, against the real processes listening
 * beyond loopback (where the api's telemetry endpoints want an operator): two api processes
 * (the second knows the root admin), the projector and the mailer, each registered with its metrics URL.
 */
const SERVER_KEY = 'telemetry-server-key-0123456789abcdef';
let admins: AdminSystem<MailSystem>;
let root: HttpClient;

function adminApi(): HttpClient {
  return new HttpClient(`${admins.adminUrl}/api/auth`, { origin: admins.system.baseUrl });
}

function value(samples: readonly PrometheusSample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([key, wanted]) => s.labels[key] === wanted))
    .reduce((sum, s) => sum + s.value, 0);
}

async function apiMetrics(): Promise<PrometheusSample[]> {
  const response = await fetch(`${admins.adminUrl}/metrics`, { headers: { 'x-api-key': SERVER_KEY } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return parsePrometheusText(await response.text());
}

async function registered(service: string): Promise<string[]> {
  const rows = await admins.system.query<{ metrics_url: string }>(`SELECT metrics_url FROM process_registry WHERE service = $1 AND metrics_url IS NOT NULL`, [service]);
  return rows.map((row) => row.metrics_url);
}

async function scrape(url: string): Promise<PrometheusSample[]> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return parsePrometheusText(await response.text());
}

beforeAll(async () => {
  admins = await startAdminSystem(
    { env: { HOST: '0.0.0.0', AUTH_SERVER_API_KEY: SERVER_KEY, AUTH_RATE_LIMIT_ENABLED: 'false' } },
    (options) => startMailSystem({ ...options, smtp: false }),
  );
  root = adminApi();
  expect((await root.post('sign-in/email', { email: admins.rootEmail, password: DEFAULT_PASSWORD })).status).toBe(200);
  // Every process registers itself at start: two apis, the projector, the mailer.
  await waitFor(async () => (await registered('api')).length === 2 && (await registered('projector')).length === 1 && (await registered('mailer')).length === 1, {
    timeoutMs: 30_000,
    message: 'every process in the registry',
  });
  // A projector's row lists the projections it holds from the heartbeat after it took their locks.
  await waitFor(async () => (await admins.system.query(`SELECT 1 FROM process_registry WHERE service = 'projector' AND 'identity' = ANY(projections)`)).length === 1, {
    timeoutMs: 30_000,
    message: 'the projector to register the projections it holds',
  });
}, 120_000);

afterAll(async () => {
  await admins?.stop();
});

describe("the api's /metrics", () => {
  it('answers operators only: the server key or an admin session; a user is refused, anonymous is unauthorized', async () => {
    expect((await fetch(`${admins.adminUrl}/metrics`, { headers: { 'x-api-key': SERVER_KEY } })).status).toBe(200);
    expect((await root.get(`${admins.adminUrl}/metrics`)).status).toBe(200);
    const anonymous = await adminApi().get(`${admins.adminUrl}/metrics`);
    expect({ status: anonymous.status, code: (anonymous.json as { code?: string }).code }).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    const user = adminApi();
    await signUp(user);
    const refused = await user.get(`${admins.adminUrl}/metrics`);
    expect({ status: refused.status, code: (refused.json as { code?: string }).code }).toEqual({ status: 403, code: 'YOU_ARE_NOT_ALLOWED_TO_OPERATE' });
  });

  it('counts sign-ins by outcome, sign-ups, and every request by route template', async () => {
    const before = await apiMetrics();
    const client = adminApi();
    const { user } = await signUp(client);
    expect((await client.post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);
    expect((await client.post('sign-in/email', { email: user.email, password: 'not the password at all' })).status).toBe(401);
    expect((await client.get('get-session')).status).toBe(200);
    const after = await apiMetrics();

    const moved = (name: string, labels: Record<string, string>): number => value(after, name, labels) - value(before, name, labels);
    expect(moved('portcullis_sign_ins_total', { method: 'email', outcome: 'success' })).toBe(1);
    expect(moved('portcullis_sign_ins_total', { method: 'email', outcome: 'failure' })).toBe(1);
    expect(moved('portcullis_sign_ups_total', { method: 'email' })).toBe(1);
    expect(moved('http_server_request_duration_count', { http_route: '/api/auth/sign-in/email', status_class: '2xx' })).toBe(1);
    expect(moved('http_server_request_duration_count', { http_route: '/api/auth/sign-in/email', status_class: '4xx' })).toBe(1);
    expect(moved('http_server_request_duration_count', { http_route: '/api/auth/get-session', http_request_method: 'GET' })).toBe(1);
    // Pools, the password-hashing queue and the event loop are there too.
    expect(after.some((s) => s.name === 'portcullis_db_pool_connections' && s.labels.pool === 'api')).toBe(true);
    expect(after.some((s) => s.name === 'portcullis_password_hashing_queue')).toBe(true);
    expect(after.some((s) => s.name === 'portcullis_event_loop_delay' && s.labels.stat === 'p99')).toBe(true);
  });
});

describe("the projector's and the mailer's own ports", () => {
  it('serve /healthz, /readyz and /metrics: projection checkpoints and lag, mail outcomes and queue', async () => {
    const [projectorUrl] = await registered('projector');
    const [mailerUrl] = await registered('mailer');
    for (const url of [projectorUrl!, mailerUrl!]) {
      expect((await fetch(new URL('/healthz', url))).status).toBe(200);
      const ready = await fetch(new URL('/readyz', url));
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { status: string }).status).toBe('ready');
    }

    const client = adminApi();
    const { user } = await signUp(client);
    const head = Number((await admins.system.query<{ position: string }>('SELECT position FROM event_log_head'))[0]!.position);
    // The projector holds the identity projection and reports it at the log's head once it has caught up.
    await waitFor(async () => value(await scrape(projectorUrl!), 'portcullis_projection_checkpoint', { projection: 'identity' }) >= head, {
      timeoutMs: 15_000,
      message: 'the projector to report the identity projection at the head',
    });
    const projector = await scrape(projectorUrl!);
    expect(value(projector, 'portcullis_projection_lag_events', { projection: 'identity' })).toBeGreaterThanOrEqual(0);
    expect(projector.some((s) => s.name === 'portcullis_projection_lag_seconds' && s.labels.projection === 'identity')).toBe(true);

    const before = await scrape(mailerUrl!);
    expect((await new HttpClient(admins.system.authUrl).post('request-password-reset', { email: user.email })).status).toBe(200);
    await waitFor(async () => value(await scrape(mailerUrl!), 'portcullis_mail_deliveries_total', { outcome: 'sent', kind: 'password-reset' }) > value(before, 'portcullis_mail_deliveries_total', { outcome: 'sent', kind: 'password-reset' }), {
      timeoutMs: 15_000,
      message: 'the mailer to count the reset mail sent',
    });
    const mailer = await scrape(mailerUrl!);
    const queued = (samples: PrometheusSample[]): number => value(samples, 'portcullis_mail_deliveries_total', { outcome: 'queued', kind: 'password-reset' });
    expect(queued(mailer) - queued(before)).toBe(1);
    expect(mailer.some((s) => s.name === 'portcullis_mail_queue_depth')).toBe(true);
  });
});

describe('/ops/overview', () => {
  it('answers the contract\'s snapshot: the series of the answering api, projections with their holder, mail, every process up', async () => {
    const client = adminApi();
    const { user } = await signUp(client);
    expect((await client.post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);

    const answer: HttpResponse = await root.get(`${admins.adminUrl}/ops/overview`);
    expect(answer.status, answer.text).toBe(200);
    const overview = opsOverviewSchema.parse(answer.json);
    // Listening on a wildcard, each api registers this machine's routable address: its port tells them apart.
    const adminInstance = (await admins.system.query<{ instance_id: string; metrics_url: string }>(`SELECT instance_id, metrics_url FROM process_registry WHERE service = 'api'`)).find(
      (row) => new URL(row.metrics_url).port === new URL(admins.adminUrl).port,
    );
    expect(overview.answeredBy.instanceId).toBe(adminInstance?.instance_id);
    expect(overview.series.minutes).toHaveLength(60);
    expect(overview.series.signIns.success.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2);
    expect(overview.series.signUps.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(overview.activeSessions).toBeGreaterThanOrEqual(2);
    expect(overview.health.postgres.ok).toBe(true);
    expect(overview.health.redis).toBeNull();
    expect(overview.health.processes.filter((p) => p.up).map((p) => p.service).sort()).toEqual(['api', 'api', 'mailer', 'projector']);
    // Each process' event-loop delay, from its own /metrics (the other api's with the server key).
    expect(overview.health.processes.filter((p) => p.up && p.eventLoopDelayP99Ms === null).map((p) => p.service)).toEqual([]);
    const identity = overview.projections.find((p) => p.name === 'identity');
    expect(identity?.holder).toBe(overview.health.processes.find((p) => p.service === 'projector')?.instanceId);
    expect(identity?.checkpoint).not.toBeNull();

    const anonymous = await adminApi().get(`${admins.adminUrl}/ops/overview`);
    expect(anonymous.status).toBe(401);
    const user2 = adminApi();
    await signUp(user2);
    expect((await user2.get(`${admins.adminUrl}/ops/overview`)).status).toBe(403);
  });
});
