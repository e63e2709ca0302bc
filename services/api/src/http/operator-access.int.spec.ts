import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';

/** The ops writes hold the auth API's origin rule themselves (they stand outside its perimeter). */
describe('ops writes from a browser page', () => {
  let api: InProcessApi;
  const verify = (headers: Record<string, string>) => api.app.inject({ method: 'POST', url: '/ops/audit/verify', headers });
  const latestCheck = async () => (await api.app.inject({ url: '/ops/audit/verification' })).json<{ latest: unknown }>().latest;

  beforeAll(async () => {
    // A developer's api: loopback only, so callers on this machine need no credential.
    api = await startInProcessApi('operator_access', { HOST: '127.0.0.1', BASE_URL: 'http://localhost:3000' });
  });

  afterAll(async () => {
    await api?.close();
  });

  it('refuses a write sent from a page of another site, and starts nothing', async () => {
    const refused = await verify({ origin: 'https://attacker.example' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'INVALID_ORIGIN' });
    const byReferer = await verify({ referer: 'https://attacker.example/page' });
    expect(byReferer.json()).toMatchObject({ code: 'INVALID_ORIGIN' });
    expect(await latestCheck()).toBeNull();
  });

  it('refuses a write that carries cookies but names no origin', async () => {
    const refused = await verify({ cookie: 'better-auth.session_token=anything' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'MISSING_OR_NULL_ORIGIN' });
    expect(await latestCheck()).toBeNull();
  });

  it('accepts the same write from the api origin, and from a script on this machine (no cookies, no origin)', async () => {
    const fromConsole = await verify({ origin: 'http://localhost:3000' });
    expect(fromConsole.statusCode, fromConsole.body).toBeLessThan(300);
    const fromScript = await verify({});
    expect(fromScript.statusCode, fromScript.body).toBeLessThan(300);
    expect(await latestCheck()).not.toBeNull();
  });
});

/**
 * Who may read the ops endpoints follows where the api listens, never NODE_ENV: a deployment that leaves
 * NODE_ENV unset (development) or at test on a public address must be as closed as production.
 */
describe('operators, whatever NODE_ENV says', () => {
  const KEY = 'operator-access-key-0123456789abcdef0123';
  /** The mailbox, an audit search, an ops read and the Prometheus figures. */
  const opsReads = ['/ops/mailbox', '/ops/audit/events', '/ops/projections', '/metrics'];
  const started: InProcessApi[] = [];

  afterAll(async () => {
    for (const api of started) await api.close();
  });

  async function apiWith(env: Record<string, string>): Promise<InProcessApi> {
    const api = await startInProcessApi('operator_rule', { AUTH_SERVER_API_KEY: KEY, ...env });
    started.push(api);
    return api;
  }

  for (const nodeEnv of ['development', 'test']) {
    it(`wants an operator from an api listening beyond loopback with NODE_ENV=${nodeEnv}`, async () => {
      const { app } = await apiWith({ HOST: '0.0.0.0', NODE_ENV: nodeEnv });
      for (const url of opsReads) {
        const anonymous = await app.inject({ url });
        expect(anonymous.statusCode, url).toBe(401);
        expect(anonymous.json(), url).toMatchObject({ code: 'UNAUTHORIZED' });
        const operator = await app.inject({ url, headers: { 'x-api-key': KEY } });
        expect(operator.statusCode, `${url}: ${operator.body}`).toBe(200);
      }
    });
  }

  it('wants an operator for a request a proxy relayed to a loopback api, or for any once proxies are configured', async () => {
    const local = (await apiWith({ HOST: '127.0.0.1' })).app;
    const proxied = (await apiWith({ HOST: '127.0.0.1', AUTH_TRUSTED_PROXIES: 'loopback' })).app;
    for (const url of opsReads) {
      for (const relay of [{ 'x-forwarded-for': '203.0.113.7' }, { forwarded: 'for=203.0.113.7' }, { 'x-real-ip': '203.0.113.7' }]) {
        expect((await local.inject({ url, headers: relay })).statusCode, `${url} ${JSON.stringify(relay)}`).toBe(401);
      }
      expect((await proxied.inject({ url })).statusCode, url).toBe(401);
      expect((await proxied.inject({ url, headers: { 'x-api-key': KEY } })).statusCode, url).toBe(200);
    }
  });

  it('wants an operator from a loopback api for a request naming another host (a page that rebound its name to 127.0.0.1)', async () => {
    const { app } = await apiWith({ HOST: '127.0.0.1' });
    for (const url of opsReads) {
      for (const host of ['attacker.example:3000', 'attacker.example', '127.0.0.1.attacker.example', 'localhost.attacker.example:3000']) {
        const rebound = await app.inject({ url, headers: { host } });
        expect(rebound.statusCode, `${url} via ${host}`).toBe(401);
      }
      for (const host of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000', 'console.localhost:3000', '127.0.0.2']) {
        const local = await app.inject({ url, headers: { host } });
        expect(local.statusCode, `${url} via ${host}: ${local.body}`).toBe(200);
      }
    }
  });

  it('answers anyone on this machine when the api listens on loopback alone, in production too', async () => {
    const { app } = await apiWith({ HOST: '127.0.0.1', NODE_ENV: 'production', SMTP_URL: 'smtp://mail.example.test:25' });
    for (const url of opsReads) {
      const anonymous = await app.inject({ url });
      expect(anonymous.statusCode, `${url}: ${anonymous.body}`).toBe(200);
    }
  });
});
