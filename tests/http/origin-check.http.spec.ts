import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, expectCatalogueError, signUp, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';

/**
 * Trusted origins and the redirect-parameter and origin checks (spec section 5; better-auth's origin-check
 * middleware), over real HTTP. The browser-driven version of the CSRF case is csrf-browser.http.spec.ts.
 */
let system: System;
const TRUSTED = 'https://app.example.com';
const client = (headers: Record<string, string> = {}): HttpClient => new HttpClient(system.authUrl, headers);

async function eventCount(): Promise<number> {
  return Number((await system.query<{ n: string }>('SELECT count(*) AS n FROM events'))[0]!.n);
}

beforeAll(async () => {
  system = await startSystem({ env: { TRUSTED_ORIGINS: `${TRUSTED},https://*.example.org` } });
});
afterAll(async () => {
  await system?.stop();
});

describe('redirect and callback parameters', () => {
  it('accepts relative paths, the base URL origin, TRUSTED_ORIGINS entries and their wildcard patterns', async () => {
    const { user } = await signUp(client());
    for (const callbackURL of ['/dashboard?tab=1', `${system.baseUrl}/after`, `${TRUSTED}/welcome`, 'https://eu.example.org/x']) {
      const response = await client().post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD, callbackURL });
      expect(response.status, `${callbackURL}: ${response.text}`).toBe(200);
      expect(response.json).toMatchObject({ redirect: true, url: callbackURL });
    }
  });

  it("refuses anything else with 403 and better-auth's message for the parameter, in the body or the query", async () => {
    const { user } = await signUp(client());
    const evil = [
      'https://evil.example/phish',
      '//evil.example',
      '/\\evil.example',
      '/%2F%2Fevil.example',
      'javascript:alert(1)',
      'https://app.example.com.evil.example/',
      'https://example.org.evil.example/',
      'http://app.example.com/',
    ];
    const before = await eventCount();
    for (const url of evil) {
      const signIn = { email: user.email, password: DEFAULT_PASSWORD };
      expectCatalogueError(await client().post('sign-in/email', { ...signIn, callbackURL: url }), 'INVALID_CALLBACK_URL');
      expectCatalogueError(await client().post('sign-in/email', { ...signIn, redirectTo: url }), 'INVALID_REDIRECT_URL');
      expectCatalogueError(await client().post('sign-in/email', { ...signIn, errorCallbackURL: url }), 'INVALID_ERROR_CALLBACK_URL');
      expectCatalogueError(await client().post('sign-in/email', { ...signIn, newUserCallbackURL: url }), 'INVALID_NEW_USER_CALLBACK_URL');
      expectCatalogueError(await client().post(`sign-in/email?callbackURL=${encodeURIComponent(url)}`, signIn), 'INVALID_CALLBACK_URL');
      // GET routes too: a redirect from a link is as open as one from a form.
      expectCatalogueError(await client().get(`get-session?callbackURL=${encodeURIComponent(url)}`), 'INVALID_CALLBACK_URL');
    }
    // Refused before the handler: no session was opened, no failure recorded.
    expect(await eventCount()).toBe(before);
  });

  it('answers a redirect parameter that is not a string with 400, naming it', async () => {
    const response = await client().post<{ details: string }>('sign-in/email', { email: 'a@example.com', password: 'x', callbackURL: 5 });
    expectCatalogueError(response, 'VALIDATION_ERROR');
    expect(response.json.details).toBe('[body.callbackURL] Invalid callbackURL: expected a string');
    const query = await client().get<{ details: string }>('get-session?redirectTo=a&redirectTo=b');
    expectCatalogueError(query, 'INVALID_QUERY_PARAMETERS');
    expect(query.json.details).toBe('[query.redirectTo] Invalid redirectURL: expected a string');
  });
});

describe('origin check on requests that carry cookies', () => {
  /** A signed-in client whose next POST sends exactly `headers` beside its cookie. */
  async function signedIn(): Promise<{ c: HttpClient; token: string }> {
    const c = client();
    const { token } = await signUp(c);
    return { c, token };
  }

  async function stillSignedIn(c: HttpClient, token: string): Promise<void> {
    const current = await c.get<SessionAnswerJson>('get-session');
    expect(current.json?.session.token).toBe(token);
  }

  it('refuses a POST with cookies and no Origin or Referer: 403 MISSING_OR_NULL_ORIGIN, and changes nothing', async () => {
    const { c, token } = await signedIn();
    const before = await eventCount();
    expectCatalogueError(await c.post('revoke-sessions', {}, { headers: { origin: '' } }), 'MISSING_OR_NULL_ORIGIN');
    expectCatalogueError(await c.post('sign-out', {}, { headers: { origin: 'null' } }), 'MISSING_OR_NULL_ORIGIN');
    expect(await eventCount()).toBe(before);
    await stillSignedIn(c, token);
  });

  it('refuses a POST with cookies from an untrusted origin or referer: 403 INVALID_ORIGIN, before the body is validated', async () => {
    const { c, token } = await signedIn();
    const before = await eventCount();
    expectCatalogueError(await c.post('revoke-sessions', {}, { headers: { origin: 'https://evil.example' } }), 'INVALID_ORIGIN');
    expectCatalogueError(await c.post('update-user', { name: 'pwned' }, { headers: { origin: 'http://127.0.0.1:1' } }), 'INVALID_ORIGIN');
    expectCatalogueError(
      await c.post('sign-out', {}, { headers: { origin: '', referer: 'https://evil.example/page' } }),
      'INVALID_ORIGIN',
    );
    // An invalid body does not get to say so: the origin is refused first, as better-auth orders it.
    expectCatalogueError(await c.post('revoke-session', { token: 5 }, { headers: { origin: 'https://evil.example' } }), 'INVALID_ORIGIN');
    expect(await eventCount()).toBe(before);
    await stillSignedIn(c, token);
  });

  it('accepts trusted origins (exact, pattern, referer) and a same-origin "null" vouched for by Fetch Metadata', async () => {
    const { c, token } = await signedIn();
    const trustedCalls: Record<string, string>[] = [
      { origin: TRUSTED },
      { origin: 'https://shop.example.org' },
      { origin: '', referer: `${system.baseUrl}/some/page` },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    ];
    for (const headers of trustedCalls) {
      const response = await c.post('revoke-other-sessions', {}, { headers });
      expect(response.status, `${JSON.stringify(headers)}: ${response.text}`).toBe(200);
    }
    await stillSignedIn(c, token);
  });

  it('leaves requests without cookies alone (bearer clients, servers), and never checks GET', async () => {
    const { c, token } = await signedIn();
    const bearer = await client().post('revoke-other-sessions', {}, {
      headers: { origin: 'https://evil.example', authorization: `Bearer ${token}` },
    });
    expect(bearer.status, bearer.text).toBe(200);
    const get = await c.get<SessionAnswerJson>('get-session', { headers: { origin: 'https://evil.example' } });
    expect(get.json?.session.token).toBe(token);
  });
});

describe('login CSRF on sign-in and sign-up (no cookies)', () => {
  const credentials = async (): Promise<{ email: string; password: string }> => {
    const { user } = await signUp(client());
    return { email: user.email, password: DEFAULT_PASSWORD };
  };

  it('refuses a cross-site form navigation: 403 CROSS_SITE_NAVIGATION_LOGIN_BLOCKED', async () => {
    const body = await credentials();
    // What a browser sends for a form on another site that posts to sign-in (fetch cannot: it sets Sec-Fetch-Mode itself).
    const response = await rawPost(`${system.authUrl}/sign-in/email`, new URLSearchParams(body).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document',
    });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'CROSS_SITE_NAVIGATION_LOGIN_BLOCKED' });
    expect(response.setCookie).toBeUndefined();
  });

  it('holds a browser (Fetch Metadata present) to the origin rule, as Node fetch is: no Origin, untrusted Origin', async () => {
    const body = await credentials();
    expectCatalogueError(await client().post('sign-in/email', body, { headers: { origin: '', 'sec-fetch-mode': 'cors' } }), 'MISSING_OR_NULL_ORIGIN');
    expectCatalogueError(
      await client().post('sign-up/email', { ...body, name: 'X' }, { headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } }),
      'INVALID_ORIGIN',
    );
    const trusted = await client().post('sign-in/email', body, { headers: { origin: TRUSTED, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' } });
    expect(trusted.status, trusted.text).toBe(200);
  });

  it('holds sign-in by username to the same rules', async () => {
    const username = `csrf_${Date.now().toString(36)}`;
    const email = uniqueEmail('csrf-username');
    const signedUp = await client().post('sign-up/email', { name: 'Csrf', email, password: DEFAULT_PASSWORD, username });
    expect(signedUp.status, signedUp.text).toBe(200);
    const body = { username, password: DEFAULT_PASSWORD };
    const navigation = await rawPost(`${system.authUrl}/sign-in/username`, JSON.stringify(body), {
      'content-type': 'application/json',
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document',
    });
    expect(navigation.status, navigation.body).toBe(403);
    expect(JSON.parse(navigation.body)).toMatchObject({ code: 'CROSS_SITE_NAVIGATION_LOGIN_BLOCKED' });
    expect(navigation.setCookie).toBeUndefined();
    expectCatalogueError(await client().post('sign-in/username', body, { headers: { origin: '', 'sec-fetch-mode': 'cors' } }), 'MISSING_OR_NULL_ORIGIN');
    expectCatalogueError(
      await client().post('sign-in/username', body, { headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } }),
      'INVALID_ORIGIN',
    );
    expectCatalogueError(await client().post('sign-in/username', body, { headers: { origin: 'https://evil.example' } }), 'INVALID_ORIGIN');
    const trusted = await client().post('sign-in/username', body, { headers: { origin: TRUSTED, 'sec-fetch-mode': 'cors' } });
    expect(trusted.status, trusted.text).toBe(200);
  });

  it('lets a server call through (no Fetch Metadata, no Origin), but checks an Origin it does send', async () => {
    const body = await credentials();
    // Node's fetch adds sec-fetch-mode: cors (so the test clients above count as browsers); curl sends none.
    const raw = await rawPost(`${system.authUrl}/sign-in/email`, JSON.stringify(body));
    expect(raw.status, raw.body).toBe(200);
    expectCatalogueError(await client().post('sign-in/email', body, { headers: { origin: 'https://evil.example' } }), 'INVALID_ORIGIN');
  });
});

/**
 * A POST with exactly the given headers (plus length), as curl, a server SDK or a browser's form navigation
 * sends it; fetch would add Sec-Fetch-Mode of its own.
 */
async function rawPost(
  url: string,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; body: string; setCookie: string[] | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, setCookie: res.headers['set-cookie'] }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
