import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@portcullis/platform';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';

/**
 * The redirects the api answers, fed the path tricks of issue 20 and generated ones: the Location that goes out
 * must resolve (against the page that answers it, as a browser resolves it) to a trusted origin, fit a header,
 * and be decided before anything is appended. In-process on real Postgres, in production mode.
 */

const BASE_URL = 'http://localhost:3000';
const TRUSTED_ORIGIN = 'https://app.example.com';
const PASSWORD = 'correct horse battery';

let api: InProcessApi;

beforeAll(async () => {
  api = await startInProcessApi('redirects', {
    NODE_ENV: 'production',
    // Production wants a mail server; nothing in process sends through it.
    SMTP_URL: 'smtp://mail.example.test:25',
    AUTH_SECRET: 'redirects-secret-redirects-secret-0123',
    BASE_URL,
    TRUSTED_ORIGINS: TRUSTED_ORIGIN,
    AUTH_RATE_LIMIT_ENABLED: 'false',
    AUTH_BRUTE_FORCE_PROTECTION: 'false',
  });
});

afterAll(async () => {
  await api?.close();
});

function landsOnTrustedOrigin(location: string, answeredFrom: string): boolean {
  const origin = new URL(location, `${BASE_URL}${answeredFrom}`).origin;
  return origin === BASE_URL || origin === TRUSTED_ORIGIN;
}

/** No 5xx; and a Location, when there is one, printable ASCII that stays on a trusted origin. */
function expectSafeAnswer(response: LightMyRequestResponse, answeredFrom: string, what: string): void {
  expect(response.statusCode, `${what} → ${response.statusCode} ${response.body.slice(0, 200)}`).toBeLessThan(500);
  const location = response.headers.location;
  if (location === undefined) return;
  expect(typeof location).toBe('string');
  expect(location, what).toMatch(/^[\x21-\x7e]*$/);
  expect(landsOnTrustedOrigin(location, answeredFrom), `${what} → Location ${String(location)}`).toBe(true);
}

async function signUp(email: string): Promise<void> {
  const response = await api.app.inject({
    method: 'POST',
    url: '/api/auth/sign-up/email',
    headers: { origin: BASE_URL },
    payload: { name: 'Redirected', email, password: PASSWORD },
  });
  expect(response.statusCode, response.body).toBe(200);
}

const piece = fc.constantFrom(
  '/', '//', '..', '.', '%2e', '%2E', '%2e%2e', '.%2e', '%2f', '%5c', '\\', ' ', '@', ':', '?', '#', '&', 'evil.test', 'localhost',
  '\u3002', '\u2028', '\uff0f', '\u00e9', '\u{1F600}', '%', 'a', 'dashboard', 'https://evil.test', 'javascript:alert(1)',
);
const trick = fc
  .tuple(fc.constantFrom('/', '/', '', `${BASE_URL}/`, `${TRUSTED_ORIGIN}/`), fc.array(piece, { maxLength: 8 }))
  .map(([start, pieces]) => start + pieces.join(''));

describe('redirects the api builds', () => {
  it('answers a failed verification link with no open redirect for the tricks the issue found', async () => {
    for (const callbackURL of ['/..//evil.test', '/%2e%2e//evil.test', '/x/../..//evil.test', '/.%2e//evil.test']) {
      const url = `/api/auth/verify-email?token=x&callbackURL=${encodeURIComponent(callbackURL)}`;
      const response = await api.app.inject({ method: 'GET', url });
      expectSafeAnswer(response, url, callbackURL);
    }
  });

  it('sends a Location that stays on a trusted origin from verify-email, reset-password and sign-in, whatever the callbackURL', async () => {
    const email = 'redirected@example.com';
    await signUp(email);
    await fc.assert(
      fc.asyncProperty(trick, async (callbackURL) => {
        const encoded = encodeURIComponent(callbackURL);
        for (const url of [`/api/auth/verify-email?token=x&callbackURL=${encoded}`, `/api/auth/reset-password/not-a-token?callbackURL=${encoded}`]) {
          expectSafeAnswer(await api.app.inject({ method: 'GET', url }), url, `GET ${callbackURL}`);
        }
        const signIn = await api.app.inject({
          method: 'POST',
          url: '/api/auth/sign-in/email',
          headers: { origin: BASE_URL },
          payload: { email, password: PASSWORD, callbackURL },
        });
        expectSafeAnswer(signIn, '/api/auth/sign-in/email', `sign-in ${JSON.stringify(callbackURL)}`);
      }),
      { numRuns: 150 },
    );
  });

  it('signs in with a callbackURL outside Latin-1: the Location goes out encoded, and the client gets the session it opened', async () => {
    const email = 'unicode-callback@example.com';
    await signUp(email);
    for (const [callbackURL, sent] of [['/\u3002', '/%E3%80%82'], ['/next\u2028step', '/next%E2%80%A8step']] as const) {
      const before = Number(await api.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM events WHERE type = 'session.created.v2'`));
      const response = await api.app.inject({
        method: 'POST',
        url: '/api/auth/sign-in/email',
        headers: { origin: BASE_URL },
        payload: { email, password: PASSWORD, callbackURL },
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers.location).toBe(sent);
      const answer = JSON.parse(response.body) as { token: string; url: string; redirect: boolean };
      expect(answer).toMatchObject({ redirect: true, url: callbackURL });
      // The one session appended is the one answered.
      expect(Number(await api.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM events WHERE type = 'session.created.v2'`))).toBe(before + 1);
      const session = await api.app.inject({ method: 'GET', url: '/api/auth/get-session', headers: { authorization: `Bearer ${answer.token}` } });
      expect((JSON.parse(session.body) as { user: { email: string } } | null)?.user.email).toBe(email);
    }
  });
});
