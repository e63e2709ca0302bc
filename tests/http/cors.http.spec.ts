import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, expectCatalogueError, signUp, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { rawRequest } from '../support/raw-request.ts';
import { HttpClient, startSystem, type HttpResponse, type System } from '../support/system.ts';

/**
 * CORS for apps on the trusted origins, over real HTTP: preflights, credentialed requests, and an untrusted
 * origin answered exactly as before CORS existed (no CORS header; the origin check's refusal).
 */
let system: System;
const APP = 'https://app.example.com';
const PATTERNED = 'https://shop.example.org';
const EVIL = 'https://evil.example';
/** What a browser's fetch from a page on `origin` sends beside its cookies. */
const fromPage = (origin: string): Record<string, string> => ({ origin, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' });
const client = (): HttpClient => new HttpClient(system.authUrl);

beforeAll(async () => {
  system = await startSystem({ env: { TRUSTED_ORIGINS: `${APP},https://*.example.org` } });
});
afterAll(async () => {
  await system?.stop();
});

async function preflight(path: string, headers: Record<string, string>): Promise<Response> {
  const response = await fetch(`${system.authUrl}/${path}`, { method: 'OPTIONS', headers });
  await response.body?.cancel();
  return response;
}

function corsHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => name.startsWith('access-control-')));
}

/** The names a comma-separated header lists, lower-cased. */
const listed = (value: string | null): string[] => (value ?? '').split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);

function expectAllowed(response: HttpResponse, origin: string): void {
  expect(response.headers.get('access-control-allow-origin'), response.text).toBe(origin);
  expect(response.headers.get('access-control-allow-credentials')).toBe('true');
  expect(listed(response.headers.get('vary'))).toContain('origin');
}

describe('preflight', () => {
  it('answers a trusted origin (exact or by pattern) with 204: credentials, methods, and the headers better-auth\'s client sends', async () => {
    for (const origin of [APP, PATTERNED, system.baseUrl]) {
      const response = await preflight('sign-in/email', {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,authorization,x-captcha-response',
      });
      expect(response.status, origin).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(origin);
      expect(response.headers.get('access-control-allow-credentials')).toBe('true');
      expect(listed(response.headers.get('access-control-allow-methods'))).toEqual(['get', 'post']);
      expect(listed(response.headers.get('access-control-allow-headers'))).toEqual(
        expect.arrayContaining(['content-type', 'authorization', 'x-captcha-response']),
      );
      expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    }
  });

  it('gives an untrusted origin, or none, what an OPTIONS got before: 404 and no CORS header', async () => {
    const before = await fetch(`${system.authUrl}/sign-in/email`, { method: 'OPTIONS' });
    const expected = { status: before.status, body: await before.text() };
    expect(expected.status).toBe(404);
    for (const origin of [EVIL, 'null', 'https://app.example.com.evil.example', 'http://app.example.com']) {
      const response = await fetch(`${system.authUrl}/sign-in/email`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect({ status: response.status, body: await response.text() }, origin).toEqual(expected);
      expect(corsHeaders(response.headers), origin).toEqual({});
    }
  });
});

describe('requests from an app on a trusted origin', () => {
  it('signs up, reads its session and signs out with its cookies, every answer readable by the page', async () => {
    const c = new HttpClient(system.authUrl, fromPage(APP));
    const up = await c.post<{ token: string }>('sign-up/email', { name: 'Cors App', email: uniqueEmail('cors'), password: DEFAULT_PASSWORD });
    expect(up.status, up.text).toBe(200);
    expectAllowed(up, APP);
    // The bearer plugin's token stays readable beside the headers CORS exposes.
    expect(listed(up.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(['set-auth-token', 'x-retry-after', 'x-request-id']));
    expect(up.headers.get('set-auth-token')).toMatch(/\./);

    const session = await c.get<SessionAnswerJson>('get-session');
    expect(session.json?.session.token).toBe(up.json.token);
    expectAllowed(session, APP);

    const out = await c.post('sign-out', {});
    expect(out.status, out.text).toBe(200);
    expectAllowed(out, APP);
    expect((await c.get('get-session')).json).toBeNull();
  });

  it("carries CORS headers on refusals too, so the app can read better-auth's error", async () => {
    const c = new HttpClient(system.authUrl, fromPage(PATTERNED));
    const wrong = await c.post('sign-in/email', { email: uniqueEmail('nobody'), password: DEFAULT_PASSWORD });
    expectCatalogueError(wrong, 'INVALID_EMAIL_OR_PASSWORD');
    expectAllowed(wrong, PATTERNED);
  });
});

describe('requests from an untrusted origin', () => {
  it('meet the same refusal as before, with no CORS header', async () => {
    const c = client();
    const { token } = await signUp(c);
    const before = await system.query<{ n: string }>('SELECT count(*) AS n FROM events');
    const refused = await c.post('revoke-sessions', {}, { headers: fromPage(EVIL) });
    expectCatalogueError(refused, 'INVALID_ORIGIN');
    expect(corsHeaders(refused.headers)).toEqual({});
    const login = await client().post('sign-in/email', { email: uniqueEmail('x'), password: DEFAULT_PASSWORD }, { headers: fromPage(EVIL) });
    expectCatalogueError(login, 'INVALID_ORIGIN');
    expect(corsHeaders(login.headers)).toEqual({});
    expect(await system.query<{ n: string }>('SELECT count(*) AS n FROM events')).toEqual(before);

    // A GET is answered as ever (the origin check never looked at one), but no page on that origin may read it.
    const read = await c.get<SessionAnswerJson>('get-session', { headers: fromPage(EVIL) });
    expect(read.json?.session.token).toBe(token);
    expect(corsHeaders(read.headers)).toEqual({});
  });

  it('leaves a server (no Origin) as it was: no CORS header, set-auth-token still exposed as the bearer plugin does', async () => {
    // Raw: Node's fetch would send Sec-Fetch-Mode, and so count as a browser.
    const up = await rawRequest(system.baseUrl, {
      method: 'POST',
      target: '/api/auth/sign-up/email',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Server', email: uniqueEmail('server'), password: DEFAULT_PASSWORD }),
    });
    expect(up.status, up.text).toBe(200);
    expect(Object.keys(up.headers).filter((name) => name.startsWith('access-control-'))).toEqual(['access-control-expose-headers']);
    expect(up.headers['access-control-expose-headers']).toBe('set-auth-token');
  });
});
