import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';

/** The ops writes hold the auth API's origin rule themselves (they stand outside its perimeter). */
describe('ops writes from a browser page', () => {
  let api: InProcessApi;
  const verify = (headers: Record<string, string>) => api.app.inject({ method: 'POST', url: '/ops/audit/verify', headers });
  const latestCheck = async () => (await api.app.inject({ url: '/ops/audit/verification' })).json<{ latest: unknown }>().latest;

  beforeAll(async () => {
    // A developer's api: loopback only, not production, so callers on this machine need no credential.
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
