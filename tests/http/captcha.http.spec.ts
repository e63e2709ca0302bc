import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import { DEFAULT_PASSWORD, expectCatalogueError, uniqueEmail } from '../support/auth.ts';
import { FakeCaptchaVendor } from '../support/captcha-vendor.ts';
import { spawnService, waitFor } from '../support/processes.ts';
import { rawRequest } from '../support/raw-request.ts';
import { HttpClient, startSystem, type HttpResponse, type System } from '../support/system.ts';
import { serviceEntries } from '../../scripts/build.ts';

const SECRET = 'captcha-secret-for-tests';
const TIMEOUT_MS = 600;

let vendor: FakeCaptchaVendor;
beforeAll(async () => {
  vendor = await FakeCaptchaVendor.start();
});
afterAll(async () => {
  await vendor?.close();
});

function post(system: System, path: string, body: unknown, captcha?: string): Promise<HttpResponse> {
  return new HttpClient(system.authUrl).post(path, body, captcha === undefined ? {} : { headers: { 'x-captcha-response': captcha } });
}

function signUpBody(): { name: string; email: string; password: string } {
  return { name: 'Captcha', email: uniqueEmail('captcha'), password: DEFAULT_PASSWORD };
}

async function eventsMentioning(system: System, needle: string): Promise<number> {
  const rows = await system.query<{ n: string }>(`SELECT count(*) AS n FROM events e WHERE strpos(e::text, $1) > 0`, [needle]);
  return Number(rows[0]!.n);
}

describe('captcha: cloudflare-turnstile, default endpoints', () => {
  const path = '/turnstile/siteverify';
  let system: System;
  beforeAll(async () => {
    system = await startSystem({
      env: {
        AUTH_CAPTCHA_PROVIDER: 'cloudflare-turnstile',
        AUTH_CAPTCHA_SECRET_KEY: SECRET,
        AUTH_CAPTCHA_VERIFY_URL: vendor.url(path),
        AUTH_CAPTCHA_TIMEOUT_MS: String(TIMEOUT_MS),
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it("refuses a request without x-captcha-response on every default endpoint with better-auth's 400", async () => {
    const bodies: Record<string, unknown> = {
      'sign-up/email': signUpBody(),
      'sign-in/email': { email: uniqueEmail('nobody'), password: DEFAULT_PASSWORD },
      'forget-password': { email: uniqueEmail('nobody') },
      'request-password-reset': { email: uniqueEmail('nobody') },
    };
    for (const [endpoint, body] of Object.entries(bodies)) {
      expectCatalogueError(await post(system, endpoint, body), 'MISSING_RESPONSE');
      expectCatalogueError(await post(system, endpoint, body, ''), 'MISSING_RESPONSE');
    }
    expect(errorCatalogue.MISSING_RESPONSE).toEqual({ status: 400, message: 'Missing CAPTCHA response' });
    expect(vendor.callsTo(path)).toEqual([]);
  });

  it('guards every spelling of an endpoint the router dispatches to it: percent-encoded paths and absolute-form lines', async () => {
    const spellings: Array<[string, unknown]> = [
      ['/api/auth/%73ign-in/email', { email: uniqueEmail('nobody'), password: DEFAULT_PASSWORD }],
      ['/api/auth/sign-%75p/email', signUpBody()],
      ['/api/auth/%66orget-password', { email: uniqueEmail('nobody') }],
      ['/api/auth/request-password-rese%74', { email: uniqueEmail('nobody') }],
      ['/api/%61uth/sign-up/%65mail', signUpBody()],
      ['http://x/api/auth/sign-up/email', signUpBody()],
    ];
    const before = await eventsMentioning(system, 'user.registered.v1');
    for (const [target, body] of spellings) {
      const response = await rawRequest(system.baseUrl, {
        method: 'POST',
        target,
        headers: { 'content-type': 'application/json', origin: system.baseUrl },
        body: JSON.stringify(body),
      });
      expect({ target, status: response.status, json: response.json }).toEqual({
        target,
        status: 400,
        json: { code: 'MISSING_RESPONSE', message: errorCatalogue.MISSING_RESPONSE.message },
      });
    }
    expect(await eventsMentioning(system, 'user.registered.v1')).toBe(before);
  });

  it('checks the token before the body: a malformed body without a token is a missing captcha', async () => {
    const response = await new HttpClient(system.authUrl).request('POST', 'sign-up/email', {
      rawBody: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    expectCatalogueError(response, 'MISSING_RESPONSE');
  });

  it('lets a request the vendor passes through, having sent it the secret, the token and the client IP as JSON', async () => {
    const body = signUpBody();
    const before = vendor.callsTo(path).length;
    const response = await post(system, 'sign-up/email', body, 'pass');
    expect(response.status, response.text).toBe(200);
    const calls = vendor.callsTo(path).slice(before);
    expect(calls).toEqual([
      { path, contentType: 'application/json', fields: { secret: SECRET, response: 'pass', remoteip: '127.0.0.1' } },
    ]);
    const signIn = await post(system, 'sign-in/email', { email: body.email, password: DEFAULT_PASSWORD }, 'pass');
    expect(signIn.status, signIn.text).toBe(200);
  });

  it("refuses a token the vendor rejects with better-auth's 403, and nothing of the request happens", async () => {
    const body = signUpBody();
    const response = await post(system, 'sign-up/email', body, 'fail');
    expectCatalogueError(response, 'VERIFICATION_FAILED');
    expect(errorCatalogue.VERIFICATION_FAILED).toEqual({ status: 403, message: 'Captcha verification failed' });
    expect(await eventsMentioning(system, body.email)).toBe(0);
    // Only the refusal itself is on the audit trail: where from and why, never the token.
    const requestId = response.headers.get('x-request-id');
    const refusal = async (): Promise<Array<{ data: unknown; metadata: { requestId: string | null } }>> =>
      system.query(`SELECT data, metadata FROM events WHERE type = 'perimeter.captcha_refused.v1' AND data->>'reason' = 'failed' AND data->>'route' = '/sign-up/email'`);
    await waitFor(async () => (await refusal()).length > 0, { timeoutMs: 10_000, message: 'the captcha refusal event' });
    const [found] = await refusal();
    expect(found!.metadata).toMatchObject({ ipAddress: '127.0.0.1' });
    if (requestId) expect(found!.metadata.requestId).toBe(requestId);
  });

  it('fails closed when the vendor errs, answers nonsense, or does not answer within the time-out', async () => {
    for (const token of ['http-500', 'not-json']) {
      expectCatalogueError(await post(system, 'sign-in/email', { email: uniqueEmail('x'), password: 'x' }, token), 'UNKNOWN_ERROR');
    }
    const body = signUpBody();
    const started = Date.now();
    const hung = await post(system, 'sign-up/email', body, 'hang');
    const elapsed = Date.now() - started;
    expectCatalogueError(hung, 'UNKNOWN_ERROR');
    expect(errorCatalogue.UNKNOWN_ERROR).toEqual({ status: 500, message: 'Something went wrong' });
    // The configured time-out, not the 10 s default, ended the wait; nothing was written.
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(8000);
    expect(await eventsMentioning(system, body.email)).toBe(0);
  });

  it('leaves endpoints that are not configured alone', async () => {
    const username = `free_${randomBytes(3).toString('hex')}`;
    expect((await post(system, 'is-username-available', { username })).json).toEqual({ available: true });
    expect((await post(system, 'sign-in/username', { username, password: DEFAULT_PASSWORD })).status).toBe(401);
    expect((await new HttpClient(system.authUrl).get('get-session')).status).toBe(200);
  });
});

describe('captcha: google-recaptcha v2 and v3, configured endpoints with a wildcard', () => {
  const path = '/recaptcha/siteverify';
  let system: System;
  beforeAll(async () => {
    system = await startSystem({
      env: {
        AUTH_CAPTCHA_PROVIDER: 'google-recaptcha',
        AUTH_CAPTCHA_SECRET_KEY: SECRET,
        AUTH_CAPTCHA_VERIFY_URL: vendor.url(path),
        AUTH_CAPTCHA_MIN_SCORE: '0.5',
        AUTH_CAPTCHA_ENDPOINTS: '/sign-up/email,/sign-in/*',
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('passes a v2 answer (no score) and a v3 score at or above the threshold, sent as a form', async () => {
    for (const token of ['pass', 'score:0.9', 'score:0.5']) {
      const response = await post(system, 'sign-up/email', signUpBody(), token);
      expect(response.status, `${token}: ${response.text}`).toBe(200);
    }
    const last = vendor.callsTo(path).at(-1)!;
    expect(last.contentType).toBe('application/x-www-form-urlencoded');
    expect(last.fields).toEqual({ secret: SECRET, response: 'score:0.5', remoteip: '127.0.0.1' });
  });

  it('refuses a v3 score below the threshold, and a v2 failure, with 403', async () => {
    for (const token of ['score:0.3', 'score:0.49', 'fail']) {
      const body = signUpBody();
      expectCatalogueError(await post(system, 'sign-up/email', body, token), 'VERIFICATION_FAILED');
      expect(await eventsMentioning(system, body.email)).toBe(0);
    }
  });

  it('guards every path the wildcard covers, and only the configured ones', async () => {
    const username = `wild_${randomBytes(3).toString('hex')}`;
    expectCatalogueError(await post(system, 'sign-in/username', { username, password: DEFAULT_PASSWORD }), 'MISSING_RESPONSE');
    expectCatalogueError(await post(system, 'sign-in/email', { email: uniqueEmail('w'), password: 'x' }), 'MISSING_RESPONSE');
    expect((await post(system, 'sign-in/username', { username, password: DEFAULT_PASSWORD }, 'score:0.7')).status).toBe(401);
    // Not configured here: the default list is replaced, not extended.
    expect((await post(system, 'forget-password', { email: uniqueEmail('nobody') })).status).toBe(200);
  });
});

describe('captcha: hcaptcha', () => {
  const path = '/hcaptcha/siteverify';
  let system: System;
  beforeAll(async () => {
    system = await startSystem({
      env: {
        AUTH_CAPTCHA_PROVIDER: 'hcaptcha',
        AUTH_CAPTCHA_SECRET_KEY: SECRET,
        AUTH_CAPTCHA_SITE_KEY: 'site-key-1',
        AUTH_CAPTCHA_VERIFY_URL: vendor.url(path),
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('sends the secret, token, site key and client IP as a form, and follows the verdict', async () => {
    const body = signUpBody();
    expect((await post(system, 'sign-up/email', body, 'pass')).status).toBe(200);
    expect(vendor.callsTo(path).at(-1)).toEqual({
      path,
      contentType: 'application/x-www-form-urlencoded',
      fields: { secret: SECRET, response: 'pass', sitekey: 'site-key-1', remoteip: '127.0.0.1' },
    });
    expectCatalogueError(await post(system, 'sign-in/email', { email: body.email, password: DEFAULT_PASSWORD }, 'fail'), 'VERIFICATION_FAILED');
    expect((await post(system, 'sign-in/email', { email: body.email, password: DEFAULT_PASSWORD }, 'pass')).status).toBe(200);
  });

  it('ignores a reCAPTCHA-style score: only success counts for hCaptcha', async () => {
    expect((await post(system, 'sign-up/email', signUpBody(), 'score:0.1')).status).toBe(200);
  });
});

describe('username, brute-force and captcha settings at start', () => {
  it('refuses bad values, naming each variable, without echoing the captcha secret', async () => {
    const api = spawnService({
      name: 'api-bad-captcha-config',
      entry: serviceEntries.api.built,
      env: {
        NODE_ENV: 'test',
        PORT: '0',
        DATABASE_URL: 'postgres://postgres@127.0.0.1:1/never_used',
        AUTH_SECRET: 'a-perfectly-good-secret-of-more-than-32-characters',
        REDIS_URL: '',
        AUTH_CAPTCHA_PROVIDER: 'friendly-captcha',
        AUTH_CAPTCHA_SECRET_KEY: 'do-not-print-this-secret',
        AUTH_CAPTCHA_MIN_SCORE: '1.5',
        AUTH_CAPTCHA_ENDPOINTS: 'sign-in/email',
        AUTH_BRUTE_FORCE_MAX_FAILURES: '0',
      },
    });
    try {
      const exit = await api.exited;
      const output = api.output();
      expect(exit.code).not.toBe(0);
      expect(exit.code).not.toBeNull();
      for (const name of [
        'AUTH_CAPTCHA_PROVIDER',
        'AUTH_CAPTCHA_MIN_SCORE',
        'AUTH_CAPTCHA_ENDPOINTS',
        'AUTH_BRUTE_FORCE_MAX_FAILURES',
      ]) {
        expect(output).toMatch(new RegExp(`^\\s*- ${name}[.:0-9]* `, 'm'));
      }
      expect(output).not.toContain('do-not-print-this-secret');
    } finally {
      await api.stop();
    }
  });

  it('refuses a captcha provider without a secret key, and username bounds the wrong way round', async () => {
    const api = spawnService({
      name: 'api-captcha-without-secret',
      entry: serviceEntries.api.built,
      env: {
        NODE_ENV: 'test',
        PORT: '0',
        DATABASE_URL: 'postgres://postgres@127.0.0.1:1/never_used',
        AUTH_SECRET: 'a-perfectly-good-secret-of-more-than-32-characters',
        REDIS_URL: '',
        AUTH_CAPTCHA_PROVIDER: 'hcaptcha',
        AUTH_CAPTCHA_SECRET_KEY: '',
        AUTH_USERNAME_MIN_LENGTH: '10',
        AUTH_USERNAME_MAX_LENGTH: '5',
      },
    });
    try {
      expect((await api.exited).code).not.toBe(0);
      expect(api.output()).toMatch(/^\s*- AUTH_CAPTCHA_SECRET_KEY: is required when AUTH_CAPTCHA_PROVIDER is set/m);
      expect(api.output()).toMatch(/^\s*- AUTH_USERNAME_MIN_LENGTH: must not exceed AUTH_USERNAME_MAX_LENGTH/m);
    } finally {
      await api.stop();
    }
  });
});
