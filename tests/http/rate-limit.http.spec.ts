import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import { expectCatalogueError, signUp, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { spawnService, waitFor, type ServiceProcess } from '../support/processes.ts';
import { describeWithRedis, testRedisUrl } from '../support/redis.ts';
import { rawRequest } from '../support/raw-request.ts';
import { HttpClient, startSystem, type HttpResponse, type System } from '../support/system.ts';
import { serviceEntries } from '../../scripts/build.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

/**
 * Rate limiting with better-auth's default limits, over real HTTP, counted in the store every replica
 * shares. Each test uses its own path (buckets are per client and path) so the tests do not share counts.
 */
function useSystem(env: Record<string, string>, options: { redis?: boolean } = {}): () => System {
  let system: System | undefined;
  beforeAll(async () => {
    system = await startSystem({ redis: options.redis ?? false, env: { AUTH_RATE_LIMIT_ENABLED: 'true', ...env } });
  });
  afterAll(async () => {
    await system?.stop();
  });
  return () => system!;
}

function wrongSignIn(client: HttpClient, email = uniqueEmail('nobody')): Promise<HttpResponse> {
  return client.post('sign-in/email', { email, password: 'not the password' });
}

function expectLimited(response: HttpResponse, maxRetryAfter: number): void {
  expectCatalogueError(response, 'TOO_MANY_REQUESTS');
  expect(errorCatalogue.TOO_MANY_REQUESTS.message).toBe('Too many requests. Please try again later.');
  const retryAfter = Number(response.headers.get('x-retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfter);
}

async function failedSignIns(system: System): Promise<number> {
  const rows = await system.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = 'credentials.sign_in_failed.v1'`);
  return Number(rows[0]!.n);
}

describe('rate limiting, on by default (Postgres counters)', () => {
  const system = useSystem({ AUTH_RATE_LIMIT_RULES: '/ok=2/1,/list-sessions=off' });
  const client = (headers: Record<string, string> = {}): HttpClient => new HttpClient(system().authUrl, headers);

  it('allows 3 sign-ins per 10 s per client, then 429 with X-Retry-After; the refused attempt is no failed sign-in, only one refusal event per window', async () => {
    const c = client();
    for (let i = 0; i < 3; i += 1) expectCatalogueError(await wrongSignIn(c), 'INVALID_EMAIL_OR_PASSWORD');
    const failuresBefore = await failedSignIns(system());
    const limited = await wrongSignIn(c);
    expectLimited(limited, 10);
    expect(await failedSignIns(system())).toBe(failuresBefore);
    // Limited before the body is read or checked: even a valid sign-in waits.
    expectLimited(await c.post('sign-in/email', { email: 'x@example.com', password: 'whatever' }), 10);
    // The refusal is on the audit trail, once per window however many follow, with where it came from.
    const refusals = (): Promise<Array<{ data: Record<string, unknown>; metadata: Record<string, unknown> }>> =>
      system().query(`SELECT data, metadata FROM events WHERE type = 'perimeter.sign_in_rate_limited.v1' AND stream_id = 'perimeter-127.0.0.1'`);
    await waitFor(async () => (await refusals()).length > 0, { timeoutMs: 10_000, message: 'the rate-limit refusal event' });
    const [refusal, ...more] = await refusals();
    expect(more).toEqual([]);
    expect(refusal!.data).toEqual({ route: '/sign-in/email', max: 3, windowSeconds: 10 });
    expect(refusal!.metadata).toMatchObject({ ipAddress: '127.0.0.1', actor: { kind: 'anonymous', id: null } });
    expect(JSON.stringify(refusal)).not.toContain('not the password');
    // Per path: another route of the same client is still open.
    expect((await c.get('get-session')).status).toBe(200);
  });

  it('allows 100 requests per 10 s on other paths', async () => {
    const c = client();
    for (let i = 0; i < 100; i += 1) {
      const response = await c.get('error?error=x');
      expect(response.status, `request ${i + 1}`).toBe(200);
    }
    expectLimited(await c.get('error?error=x'), 10);
  });

  it('counts per configured rule (AUTH_RATE_LIMIT_RULES) and opens again when the window closes', async () => {
    const c = client();
    expect((await c.get('ok')).status).toBe(200);
    expect((await c.get('ok')).status).toBe(200);
    const limited = await c.get('ok');
    expectLimited(limited, 1);
    const reopensAt = Date.now() + Number(limited.headers.get('x-retry-after')) * 1000;
    await waitFor(() => Date.now() > reopensAt, { timeoutMs: 5_000, message: 'the window to close' });
    expect((await c.get('ok')).status).toBe(200);

    // path=off: never limited.
    for (let i = 0; i < 105; i += 1) expect((await c.get('list-sessions')).status).toBe(401);
  });

  it('ignores X-Forwarded-For from a client that is not a trusted proxy (no bucket of its own choosing)', async () => {
    const c = client();
    for (let i = 0; i < 3; i += 1) {
      expectCatalogueError(await c.post('sign-up/email', {}, { headers: { 'x-forwarded-for': `203.0.113.${i}` } }), 'VALIDATION_ERROR');
    }
    expectLimited(await c.post('sign-up/email', {}, { headers: { 'x-forwarded-for': '203.0.113.99' } }), 10);
  });

  it('counts every spelling of a path against its route: percent-encoded and absolute-form lines share one budget', async () => {
    // Its own client (any 127.x address is this machine), so the sign-ins of the tests above do not count.
    const fromOwnAddress = (target: string, body: unknown) =>
      rawRequest(system().baseUrl, {
        method: 'POST',
        target,
        localAddress: '127.0.0.2',
        headers: { 'content-type': 'application/json', origin: system().baseUrl },
        body: JSON.stringify(body),
      });
    const email = uniqueEmail('spelled');
    const targets = [
      '/api/auth/%73ign-in/email',
      '/api/auth/sign-in/%65mail',
      `http://evil.example/api/auth/sign-in/email`,
      '/api/%61uth/%73ign-in/email',
      `HTTP://localhost/api/auth/sign-in/email`,
      '/api/auth/%73ign-in/email',
    ];
    const answers: number[] = [];
    for (const target of targets) answers.push((await fromOwnAddress(target, { email, password: 'not the password' })).status);
    expect(answers).toEqual([401, 401, 401, 429, 429, 429]);
    expect(await system().query('SELECT key, count FROM rate_limit WHERE key LIKE $1', ['127.0.0.2|%'])).toEqual([
      { key: '127.0.0.2|/sign-in/email', count: 6 },
    ]);

    // The mail routes' 3 per 60 s, however their paths are written.
    const resets: number[] = [];
    for (const target of ['/api/auth/%66orget-password', '/api/auth/forget-passwor%64', 'http://x/api/auth/forget-password', '/api/auth/%66orget-password']) {
      resets.push((await fromOwnAddress(target, { email: uniqueEmail('reset') })).status);
    }
    expect(resets).toEqual([200, 200, 200, 429]);
  });

  it('keeps counters in Postgres, one row per client and path', async () => {
    const rows = await system().query<{ key: string; count: number }>('SELECT key, count FROM rate_limit ORDER BY key');
    expect(rows.map((r) => r.key)).toEqual(expect.arrayContaining(['127.0.0.1|/sign-in/email', '127.0.0.1|/error']));
  });
});

describe('rate limiting behind a trusted proxy (AUTH_TRUSTED_PROXIES)', () => {
  const system = useSystem({ AUTH_TRUSTED_PROXIES: '127.0.0.1' });
  const viaProxy = (clientIp: string): HttpClient => new HttpClient(system().authUrl, { 'x-forwarded-for': clientIp });

  it('counts /forget-password and /request-password-reset, one operation under two names, in one bucket', async () => {
    const c = viaProxy('203.0.113.50');
    const answers: number[] = [];
    for (const path of ['forget-password', 'request-password-reset', 'forget-password', 'request-password-reset', 'forget-password']) {
      answers.push((await c.post(path, { email: uniqueEmail('one-bucket') })).status);
    }
    expect(answers).toEqual([200, 200, 200, 429, 429]);
    expect(await system().query('SELECT key, count FROM rate_limit WHERE key LIKE $1', ['203.0.113.50|%'])).toEqual([
      { key: '203.0.113.50|/request-password-reset', count: 5 },
    ]);
  });

  it('keys each forwarded client separately, and records the forwarded address on its session', async () => {
    const first = viaProxy('203.0.113.10');
    for (let i = 0; i < 3; i += 1) expectCatalogueError(await wrongSignIn(first), 'INVALID_EMAIL_OR_PASSWORD');
    expectLimited(await wrongSignIn(first), 10);
    expectCatalogueError(await wrongSignIn(viaProxy('203.0.113.11')), 'INVALID_EMAIL_OR_PASSWORD');

    const third = viaProxy('198.51.100.7');
    await signUp(third);
    const current = await third.get<SessionAnswerJson>('get-session');
    expect(current.json?.session.ipAddress).toBe('198.51.100.7');
  });

  it('reads each way of writing a forwarded address as that one client, and refuses what is no address', async () => {
    // One client, three spellings: one budget.
    const spellings = ['203.0.113.20:1111', '203.0.113.20:2222', '::ffff:cb00:7114', '[::ffff:203.0.113.20]:443'];
    const answers: number[] = [];
    for (const written of spellings) answers.push((await wrongSignIn(viaProxy(written))).status);
    expect(answers).toEqual([401, 401, 401, 429]);

    // IPv4-mapped clients in hex are their IPv4 addresses, not all one /64 of zeros.
    for (let i = 0; i < 3; i += 1) expectCatalogueError(await wrongSignIn(viaProxy('::ffff:c633:6401')), 'INVALID_EMAIL_OR_PASSWORD');
    expectCatalogueError(await wrongSignIn(viaProxy('::ffff:c633:6402')), 'INVALID_EMAIL_OR_PASSWORD');

    for (const garbage of ['garbage', 'example.com', '203.0.113.300', 'unknown']) {
      expectCatalogueError(await wrongSignIn(viaProxy(garbage)), 'INVALID_CLIENT_ADDRESS');
    }

    const v6 = viaProxy('[2001:DB8::5]:8443');
    await signUp(v6);
    expect((await v6.get<SessionAnswerJson>('get-session')).json?.session.ipAddress).toBe('2001:db8::5');
  });
});

/** The same limit, counted across two api replicas; an in-process counter would let each allow its own 3. */
function acrossTwoReplicas(storage: 'redis' | 'postgres'): void {
  const system = useSystem({}, { redis: storage === 'redis' });
  let second: ServiceProcess | undefined;
  let secondUrl = '';

  beforeAll(async () => {
    const port = await pickFreePort();
    // A second replica of the api behind the same public URL: same database, same Redis, same secret.
    second = spawnService({ name: 'api-2', entry: serviceEntries.api.built, env: { ...system().env, PORT: String(port) } });
    secondUrl = `http://127.0.0.1:${port}`;
    let exited = false;
    void second.exited.then(() => (exited = true));
    await waitFor(
      async () => {
        if (exited) throw new Error(`api-2 exited while starting:\n${second?.output()}`);
        const response = await fetch(`${secondUrl}/readyz`);
        await response.body?.cancel();
        return response.ok;
      },
      { timeoutMs: 60_000, intervalMs: 100, message: 'the second api to be ready' },
    );
  });
  afterAll(async () => {
    await second?.stop();
  });

  it(`shares one count per client and path between the replicas (${storage})`, async () => {
    // Both replicas serve one public origin (BASE_URL), which is what a browser would send either of them.
    const replicas = [system().authUrl, `${secondUrl}/api/auth`].map((url) => new HttpClient(url, { origin: system().baseUrl }));
    const email = uniqueEmail('replicas');
    const answers: number[] = [];
    for (let i = 0; i < 6; i += 1) answers.push((await wrongSignIn(replicas[i % 2]!, email)).status);
    expect(answers).toEqual([401, 401, 401, 429, 429, 429]);

    if (storage === 'redis') {
      const redis = new Redis(testRedisUrl()!, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      try {
        expect(Number(await redis.get(`${system().env.REDIS_KEY_PREFIX}rate-limit:127.0.0.1|/sign-in/email`))).toBe(6);
        expect(await redis.pttl(`${system().env.REDIS_KEY_PREFIX}rate-limit:127.0.0.1|/sign-in/email`)).toBeGreaterThan(0);
      } finally {
        redis.disconnect();
      }
      expect(await system().query('SELECT key FROM rate_limit')).toEqual([]);
    } else {
      expect(await system().query('SELECT key, count FROM rate_limit WHERE key = $1', ['127.0.0.1|/sign-in/email'])).toEqual([
        { key: '127.0.0.1|/sign-in/email', count: 6 },
      ]);
    }
  });
}

describe('rate limiting across two api processes sharing Postgres', () => acrossTwoReplicas('postgres'));
describeWithRedis('rate limiting across two api processes sharing Redis', () => acrossTwoReplicas('redis'));
