import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts';
import { DEFAULT_PASSWORD, expectCatalogueError, signUp, uniqueEmail } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { waitFor } from '../support/processes.ts';
import { HttpClient, startSystem, type HttpResponse, type System } from '../support/system.ts';

const MAX_FAILURES = 3;
const LOCK_SECONDS = 600;

let nextAddress = 1;
/** A source address of its own for each request, as a botnet rotating IPs (believed: the api trusts the proxy). */
function fromNewAddress(): Record<string, string> {
  const n = nextAddress++;
  return { 'x-forwarded-for': `198.51.${Math.floor(n / 250) % 250}.${(n % 250) + 1}` };
}

function uniqueUsername(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

async function attempt(system: System, path: 'sign-in/email' | 'sign-in/username', body: Record<string, unknown>): Promise<HttpResponse> {
  return new HttpClient(system.authUrl).post(path, body, { headers: fromNewAddress() });
}

async function failTimes(system: System, path: 'sign-in/email' | 'sign-in/username', body: Record<string, unknown>, times: number): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    const response = await attempt(system, path, { ...body, password: `wrong password ${i}` });
    expect(response.status, response.text).toBe(401);
  }
}

function expectLocked(response: HttpResponse, maxSeconds: number): number {
  expectCatalogueError(response, 'TOO_MANY_FAILED_SIGN_INS');
  const retryAfter = Number(response.headers.get('x-retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
  expect(response.headers.get('retry-after')).toBe(String(retryAfter));
  expect(response.setCookies).toEqual([]);
  return retryAfter;
}

describe('brute-force protection (per account, whatever the source IP)', () => {
  let system: MailSystem;

  beforeAll(async () => {
    system = await startMailSystem({
      env: {
        AUTH_BRUTE_FORCE_MAX_FAILURES: String(MAX_FAILURES),
        AUTH_BRUTE_FORCE_WINDOW: '600',
        AUTH_BRUTE_FORCE_LOCK_DURATION: String(LOCK_SECONDS),
        // The per-IP rate limiter is on, and the attacker rotates addresses past it.
        AUTH_RATE_LIMIT_ENABLED: 'true',
        AUTH_TRUSTED_PROXIES: '127.0.0.1',
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it(`locks an email after ${MAX_FAILURES} failures from ${MAX_FAILURES} addresses, refusing even the right password with 429`, async () => {
    const email = uniqueEmail('victim');
    const { user } = await signUp(new HttpClient(system.authUrl, fromNewAddress()), { email });
    await failTimes(system, 'sign-in/email', { email }, MAX_FAILURES);

    const locked = await attempt(system, 'sign-in/email', { email, password: DEFAULT_PASSWORD });
    expectLocked(locked, LOCK_SECONDS);
    expect(errorCatalogue.TOO_MANY_FAILED_SIGN_INS.status).toBe(429);
    // In any letter case: the identifier is the lower-cased email.
    expectLocked(await attempt(system, 'sign-in/email', { email: email.toUpperCase(), password: DEFAULT_PASSWORD }), LOCK_SECONDS);

    // The client addresses and the identifier are encrypted in the log under the user's key; opened here.
    const failures = await system.events(
      `SELECT type, data, metadata FROM events WHERE type = 'credentials.sign_in_failed.v1' AND stream_id = $1`,
      [system.storedStreamId(`sign-in-${email}`)],
    );
    expect(new Set(failures.map((f) => f.metadata.ipAddress)).size).toBe(MAX_FAILURES);
    const locks = await system.events<{ data: { identifier: string; userId: string | null; failures: number; lockedUntil: string } }>(
      `SELECT type, data, metadata FROM events WHERE type = 'credentials.sign_in_locked.v1' AND stream_id = $1`,
      [system.storedStreamId(`sign-in-${email}`)],
    );
    expect(locks).toHaveLength(1);
    expect(locks[0]!.data).toMatchObject({ identifier: email, userId: user.id, failures: MAX_FAILURES });
    expect(Date.parse(locks[0]!.data.lockedUntil) - Date.now()).toBeGreaterThan((LOCK_SECONDS - 60) * 1000);
    // Refused attempts are not password checks: nothing more is recorded for them.
    expect(await system.query(`SELECT 1 FROM events WHERE stream_id = $1`, [system.storedStreamId(`sign-in-${email}`)])).toHaveLength(MAX_FAILURES + 1);
  });

  it('locks an email that has no account exactly the same way, so the lock tells nothing about who is registered', async () => {
    const known = uniqueEmail('known');
    await signUp(new HttpClient(system.authUrl, fromNewAddress()), { email: known });
    const unknown = uniqueEmail('unknown');
    for (const email of [known, unknown]) await failTimes(system, 'sign-in/email', { email }, MAX_FAILURES);

    const [lockedKnown, lockedUnknown] = [
      await attempt(system, 'sign-in/email', { email: known, password: DEFAULT_PASSWORD }),
      await attempt(system, 'sign-in/email', { email: unknown, password: DEFAULT_PASSWORD }),
    ];
    expectLocked(lockedKnown, LOCK_SECONDS);
    expectLocked(lockedUnknown, LOCK_SECONDS);
    expect(lockedUnknown.text).toBe(lockedKnown.text);
  });

  it('locks a username on its own sign-in stream, and with it the account: its email is refused too', async () => {
    const email = uniqueEmail('named');
    const username = uniqueUsername('named');
    const signedUp = await new HttpClient(system.authUrl, fromNewAddress()).post('sign-up/email', { name: 'N', email, password: DEFAULT_PASSWORD, username });
    expect(signedUp.status, signedUp.text).toBe(200);
    await failTimes(system, 'sign-in/username', { username }, MAX_FAILURES);

    expectLocked(await attempt(system, 'sign-in/username', { username: username.toUpperCase(), password: DEFAULT_PASSWORD }), LOCK_SECONDS);
    const locks = await system.query(`SELECT 1 FROM events WHERE type = 'credentials.sign_in_locked.v1' AND stream_id = $1`, [
      system.storedStreamId(`sign-in-username-${username}`),
    ]);
    expect(locks).toHaveLength(1);
    expectLocked(await attempt(system, 'sign-in/email', { email, password: DEFAULT_PASSWORD }), LOCK_SECONDS);
  });

  it('counts the failures by email and by username of one account together, and locks both ways in', async () => {
    const email = uniqueEmail('both');
    const username = uniqueUsername('both');
    const signedUp = await new HttpClient(system.authUrl, fromNewAddress()).post('sign-up/email', { name: 'B', email, password: DEFAULT_PASSWORD, username });
    expect(signedUp.status, signedUp.text).toBe(200);
    const userId = (signedUp.json as { user: { id: string } }).user.id;
    // Below the limit on each identifier, at it on the account.
    await failTimes(system, 'sign-in/email', { email }, MAX_FAILURES - 1);
    await failTimes(system, 'sign-in/username', { username }, 1);

    expectLocked(await attempt(system, 'sign-in/email', { email, password: DEFAULT_PASSWORD }), LOCK_SECONDS);
    expectLocked(await attempt(system, 'sign-in/username', { username, password: DEFAULT_PASSWORD }), LOCK_SECONDS);
    const accountStream = await system.query<{ type: string; via: string | null }>(
      `SELECT type, data->>'via' AS via FROM events WHERE stream_id = $1 ORDER BY position`,
      [`sign-in-account-${userId}`],
    );
    expect(accountStream).toEqual([
      ...Array.from({ length: MAX_FAILURES - 1 }, () => ({ type: 'credentials.account_sign_in_failed.v1', via: 'email' })),
      { type: 'credentials.account_sign_in_failed.v1', via: 'username' },
      { type: 'credentials.account_sign_in_locked.v1', via: null },
    ]);
    // Neither identifier reached the limit on its own stream.
    expect(await system.query(`SELECT 1 FROM events WHERE type = 'credentials.sign_in_locked.v1' AND stream_id = ANY($1)`, [[system.storedStreamId(`sign-in-${email}`), system.storedStreamId(`sign-in-username-${username}`)]])).toEqual([]);
  });

  it('lifts the locks of an account when its password is reset, and records the lift', async () => {
    const email = uniqueEmail('reset');
    const username = uniqueUsername('reset');
    const signedUp = await new HttpClient(system.authUrl, fromNewAddress()).post('sign-up/email', { name: 'R', email, password: DEFAULT_PASSWORD, username });
    expect(signedUp.status, signedUp.text).toBe(200);
    // Locks the username and, through it, the account: the email is refused without failures of its own.
    await failTimes(system, 'sign-in/username', { username }, MAX_FAILURES);
    expectLocked(await attempt(system, 'sign-in/email', { email, password: DEFAULT_PASSWORD }), LOCK_SECONDS);

    const requested = await new HttpClient(system.authUrl).post('request-password-reset', { email }, { headers: fromNewAddress() });
    expect(requested.status, requested.text).toBe(200);
    const mail = await system.smtp!.waitForMail(email);
    const token = /\/reset-password\/([^?\s]+)/.exec(mail.text)?.[1];
    expect(token).toBeDefined();
    const newPassword = 'a brand new passphrase';
    const reset = await new HttpClient(system.authUrl).post('reset-password', { newPassword, token }, { headers: fromNewAddress() });
    expect(reset.status, reset.text).toBe(200);

    const byEmail = await attempt(system, 'sign-in/email', { email, password: newPassword });
    expect(byEmail.status, byEmail.text).toBe(200);
    const byUsername = await attempt(system, 'sign-in/username', { username, password: newPassword });
    expect(byUsername.status, byUsername.text).toBe(200);
    const lifts = await system.query<{ stream_id: string; reason: string }>(
      `SELECT stream_id, data->>'reason' AS reason FROM events WHERE type = 'credentials.sign_in_unlocked.v1' AND stream_id = ANY($1) ORDER BY position`,
      [[system.storedStreamId(`sign-in-${email}`), system.storedStreamId(`sign-in-username-${username}`)]],
    );
    expect(lifts).toEqual([{ stream_id: system.storedStreamId(`sign-in-username-${username}`), reason: 'password_reset' }]);
    const userId = (signedUp.json as { user: { id: string } }).user.id;
    const accountLifts = await system.query<{ reason: string }>(
      `SELECT data->>'reason' AS reason FROM events WHERE type = 'credentials.account_sign_in_unlocked.v1' AND stream_id = $1`,
      [`sign-in-account-${userId}`],
    );
    expect(accountLifts).toEqual([{ reason: 'password_reset' }]);

    // Counting starts again after the reset: one more failure does not lock.
    const again = await attempt(system, 'sign-in/email', { email, password: 'wrong again' });
    expectCatalogueError(again, 'INVALID_EMAIL_OR_PASSWORD');
    expect((await attempt(system, 'sign-in/email', { email, password: newPassword })).status).toBe(200);
  });

  it('holds under a burst of parallel guesses: only 401s and 429s, one lock, every checked guess recorded', async () => {
    const email = uniqueEmail('burst');
    await signUp(new HttpClient(system.authUrl, fromNewAddress()), { email });
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) => attempt(system, 'sign-in/email', { email, password: `burst guess ${i}` })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((status) => status === 401 || status === 429), responses.map((r) => `${r.status} ${r.text}`).join('\n')).toBe(true);
    const failures = await system.query(`SELECT 1 FROM events WHERE type = 'credentials.sign_in_failed.v1' AND stream_id = $1`, [system.storedStreamId(`sign-in-${email}`)]);
    expect(failures).toHaveLength(statuses.filter((status) => status === 401).length);
    const locks = await system.query(`SELECT 1 FROM events WHERE type = 'credentials.sign_in_locked.v1' AND stream_id = $1`, [system.storedStreamId(`sign-in-${email}`)]);
    expect(locks).toHaveLength(1);
    expectLocked(await attempt(system, 'sign-in/email', { email, password: DEFAULT_PASSWORD }), LOCK_SECONDS);
  });

  it('lets failures below the limit pass', async () => {
    const email = uniqueEmail('careless');
    await signUp(new HttpClient(system.authUrl, fromNewAddress()), { email });
    await failTimes(system, 'sign-in/email', { email }, MAX_FAILURES - 1);
    expect((await attempt(system, 'sign-in/email', { email, password: DEFAULT_PASSWORD })).status).toBe(200);
  });
});

describe('brute-force protection: a lock runs out', () => {
  let system: System;
  beforeAll(async () => {
    system = await startSystem({ env: { AUTH_BRUTE_FORCE_MAX_FAILURES: '2', AUTH_BRUTE_FORCE_LOCK_DURATION: '2' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('refuses while locked and lets the right password in once the lock duration has passed', async () => {
    const email = uniqueEmail('patient');
    await signUp(new HttpClient(system.authUrl, fromNewAddress()), { email });
    await failTimes(system, 'sign-in/email', { email }, 2);
    expectLocked(await attempt(system, 'sign-in/email', { email, password: DEFAULT_PASSWORD }), 2);
    let last: HttpResponse | undefined;
    await waitFor(
      async () => {
        last = await attempt(system, 'sign-in/email', { email, password: DEFAULT_PASSWORD });
        if (last.status !== 200) expectLocked(last, 2);
        return last.status === 200;
      },
      { timeoutMs: 15_000, intervalMs: 200, message: 'the lock to run out' },
    );
    expect(last?.status).toBe(200);
  });
});

describe('brute-force protection turned off', () => {
  let system: System;
  beforeAll(async () => {
    system = await startSystem({ env: { AUTH_BRUTE_FORCE_PROTECTION: 'false', AUTH_BRUTE_FORCE_MAX_FAILURES: '2' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('never locks, and still records the failures', async () => {
    const email = uniqueEmail('unguarded');
    await signUp(new HttpClient(system.authUrl, fromNewAddress()), { email });
    await failTimes(system, 'sign-in/email', { email }, 5);
    expect((await attempt(system, 'sign-in/email', { email, password: DEFAULT_PASSWORD })).status).toBe(200);
    expect(await system.query(`SELECT 1 FROM events WHERE type = 'credentials.sign_in_failed.v1' AND stream_id = $1`, [system.storedStreamId(`sign-in-${email}`)])).toHaveLength(5);
    expect(await system.query(`SELECT 1 FROM events WHERE type = 'credentials.sign_in_locked.v1'`)).toHaveLength(0);
  });
});
