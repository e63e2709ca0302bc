import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickFreePort } from '@portcullis/platform/free-port';
import { DEFAULT_PASSWORD, type SessionAnswerJson } from '../support/auth.ts';
import { HttpClient, parseSetCookie, startSystem, type HttpResponse, type System } from '../support/system.ts';

/**
 * AUTH_COOKIE_DOMAIN, AUTH_COOKIE_SAME_SITE and AUTH_COOKIE_SECURE (better-auth's crossSubDomainCookies,
 * defaultCookieAttributes and useSecureCookies) on every cookie the api sets and clears, over real HTTP. The
 * public URL is https on a subdomain; the test talks to the process on loopback, trusted as an app origin.
 */
let system: System;
const client = (): HttpClient => new HttpClient(system.authUrl);
const PREFIX = '__Secure-better-auth';

beforeAll(async () => {
  const port = await pickFreePort();
  system = await startSystem({
    port,
    env: {
      BASE_URL: 'https://auth.example.test',
      TRUSTED_ORIGINS: `http://127.0.0.1:${port}`,
      AUTH_COOKIE_DOMAIN: '.example.test',
      AUTH_COOKIE_SAME_SITE: 'none',
      AUTH_COOKIE_CACHE_ENABLED: 'true',
    },
  });
});
afterAll(async () => {
  await system?.stop();
});

/** Every Set-Cookie of the answer carries the configured attributes; answers the names it set. */
function expectConfiguredCookies(response: HttpResponse): string[] {
  expect(response.setCookies.length, response.text).toBeGreaterThan(0);
  return response.setCookies.map((line) => {
    const cookie = parseSetCookie(line);
    expect(cookie.name, line).toMatch(/^__Secure-better-auth\./);
    expect(Object.fromEntries(cookie.attributes), line).toMatchObject({ domain: 'example.test', samesite: 'None', secure: true, httponly: true, path: '/' });
    return cookie.name;
  });
}

describe('cookie settings', () => {
  it('sets the session, dont_remember and session_data cookies with Domain, SameSite=None, Secure and __Secure- names', async () => {
    const c = client();
    const email = `cookies-${Date.now().toString(36)}@example.com`;
    const up = await c.post('sign-up/email', { name: 'Cookie Settings', email, password: DEFAULT_PASSWORD });
    expect(up.status, up.text).toBe(200);
    expect(expectConfiguredCookies(up)).toEqual([`${PREFIX}.session_token`]);

    const remembered = await c.post('sign-in/email', { email, password: DEFAULT_PASSWORD, rememberMe: false });
    expect(remembered.status, remembered.text).toBe(200);
    expect(expectConfiguredCookies(remembered).sort()).toEqual([`${PREFIX}.dont_remember`, `${PREFIX}.session_token`]);

    const session = await c.get<SessionAnswerJson>('get-session');
    expect(session.json?.user.email).toBe(email);
    expect(expectConfiguredCookies(session)).toEqual([`${PREFIX}.session_data`]);
  });

  it('clears them on sign-out with the same attributes, which a browser needs to match them', async () => {
    const c = client();
    const email = `cookies-out-${Date.now().toString(36)}@example.com`;
    expect((await c.post('sign-up/email', { name: 'Cookie Settings', email, password: DEFAULT_PASSWORD })).status).toBe(200);
    expect((await c.post('sign-in/email', { email, password: DEFAULT_PASSWORD, rememberMe: false })).status).toBe(200);
    await c.get('get-session');
    const out = await c.post('sign-out', {});
    expect(out.status, out.text).toBe(200);
    expect(expectConfiguredCookies(out).sort()).toEqual([`${PREFIX}.dont_remember`, `${PREFIX}.session_data`, `${PREFIX}.session_token`]);
    for (const line of out.setCookies) expect(parseSetCookie(line).attributes.get('max-age'), line).toBe('0');
    expect(c.cookieNames()).toEqual([]);
  });
});
