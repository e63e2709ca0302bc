import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailReserved, streams, UserRegistered } from '@portcullis/contracts';
import { createDatabasePool, generateId, PostgresEventStore, protectPersonalData } from '@portcullis/platform';
import { DEFAULT_PASSWORD, expectCatalogueError, signUp, uniqueEmail, type SessionAnswerJson, type UserJson } from '../support/auth.ts';
import { domainWrite, metadataAt } from '../support/event-log.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { waitFor } from '../support/processes.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient } from '../support/system.ts';

const SERVER_API_KEY = randomBytes(24).toString('base64url');
const NEW_PASSWORD = 'a brand new passphrase';

/**
 * Password reset (from the mailed link), change, verify and set, against api, projector and mailer as real
 * processes with a real SMTP server. Resets revoke the user's sessions here (AUTH_RESET_PASSWORD_REVOKE_SESSIONS).
 * Deleting the account asks for the password once the session is no longer fresh.
 */
describe('passwords: reset by mail, change, verify, set; delete-user by password or fresh session', () => {
  let system: MailSystem;

  beforeAll(async () => {
    system = await startMailSystem({
      env: {
        AUTH_RESET_PASSWORD_REVOKE_SESSIONS: 'true',
        AUTH_SERVER_API_KEY: SERVER_API_KEY,
        // delete-user without a mailed confirmation: the password, or a session younger than 2 s.
        AUTH_DELETE_USER_ENABLED: 'true',
        AUTH_SESSION_FRESH_AGE: '2',
      },
    });
  });

  afterAll(async () => {
    await system?.stop();
  });

  const client = (): HttpClient => new HttpClient(system.authUrl);

  async function sessionOf(browser: HttpClient): Promise<SessionAnswerJson | null> {
    return (await browser.get<SessionAnswerJson | null>('get-session?disableRefresh=true')).json;
  }

  it('resets a password from the mailed link once, revoking sessions; the token then fails both ways', async () => {
    const browser = client();
    const { user } = await signUp(browser);
    const asked = await client().post('forget-password', { email: user.email.toUpperCase(), redirectTo: '/reset' });
    expect(asked.status, asked.text).toBe(200);
    expect(asked.json).toEqual({ status: true, message: 'If this email exists in our system, check your email for the reset link' });

    const mail = await system.smtp!.waitForMail(user.email, { subject: /Reset your/ });
    expect(mail.subject).toBe('Reset your Portcullis password');
    expect(mail.text).toContain('This link expires in 1 hour');
    const link = linkIn(mail);
    expect(link).toMatch(new RegExp(`^${system.authUrl}/reset-password/[A-Za-z0-9]{24}\\?callbackURL=%2Freset$`));
    const token = link.split('/reset-password/')[1]!.split('?')[0]!;
    // Only the hash is stored: neither the log nor the verification table holds the token.
    expect(await system.query(`SELECT count(*)::int AS n FROM events WHERE data::text LIKE '%' || $1 || '%'`, [token])).toEqual([{ n: 0 }]);
    expect(await system.query(`SELECT count(*)::int AS n FROM verification WHERE value = $1 AND identifier LIKE 'reset-password:%'`, [user.id])).toEqual([
      { n: 1 },
    ]);

    const landing = await client().get(link);
    expect(landing.status).toBe(302);
    expect(landing.headers.get('location')).toBe(`${system.baseUrl}/reset?token=${token}`);

    const reset = await client().post('reset-password', { newPassword: NEW_PASSWORD, token });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json).toEqual({ status: true });
    expect(await sessionOf(browser)).toBeNull();
    expectCatalogueError(await client().post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD }), 'INVALID_EMAIL_OR_PASSWORD');
    expect((await client().post('sign-in/email', { email: user.email, password: NEW_PASSWORD })).status).toBe(200);
    expect(await system.query(`SELECT count(*)::int AS n FROM verification WHERE value = $1`, [user.id])).toEqual([{ n: 0 }]);

    // Used: the link now lands on the error, and the token resets nothing.
    const reused = await client().get(link);
    expect(reused.headers.get('location')).toBe(`${system.baseUrl}/reset?error=INVALID_TOKEN`);
    expectCatalogueError(await client().post('reset-password', { newPassword: 'yet another passphrase', token }), 'INVALID_TOKEN');
    expectCatalogueError(await client().post('reset-password', { newPassword: 'yet another passphrase' }), 'INVALID_TOKEN');
    expectCatalogueError(await client().post(`reset-password?token=${'x'.repeat(24)}`, { newPassword: 'yet another passphrase' }), 'INVALID_TOKEN');
  });

  it('ends the links mailed before when a newer one is issued: only the latest resets', async () => {
    const { user } = await signUp(client());
    const tokens: string[] = [];
    for (let count = 1; count <= 3; count += 1) {
      expect((await client().post('forget-password', { email: user.email, redirectTo: '/reset' })).status).toBe(200);
      const link = linkIn(await system.smtp!.waitForMail(user.email, { subject: /Reset your/, count }));
      tokens.push(link.split('/reset-password/')[1]!.split('?')[0]!);
    }
    const [first, second, latest] = tokens as [string, string, string];
    // The verification table holds the latest link only.
    await waitFor(async () => (await system.query<{ n: number }>(`SELECT count(*)::int AS n FROM verification WHERE value = $1`, [user.id]))[0]!.n === 1, {
      timeoutMs: 10_000,
      message: 'the earlier links to leave the verification table',
    });
    for (const ended of [first, second]) {
      expect((await client().get(`reset-password/${ended}?callbackURL=%2Freset`)).headers.get('location')).toBe(`${system.baseUrl}/reset?error=INVALID_TOKEN`);
      expectCatalogueError(await client().post('reset-password', { newPassword: NEW_PASSWORD, token: ended }), 'INVALID_TOKEN');
    }
    expect((await client().post('reset-password', { newPassword: NEW_PASSWORD, token: latest })).status).toBe(200);
    expect((await client().post('sign-in/email', { email: user.email, password: NEW_PASSWORD })).status).toBe(200);
  });

  it('takes the token from the query too, checks the new password, and works under request-password-reset', async () => {
    const { user } = await signUp(client());
    expect((await client().post('request-password-reset', { email: user.email })).status).toBe(200);
    const link = linkIn(await system.smtp!.waitForMail(user.email, { subject: /Reset your/ }));
    // Without a redirectTo the link carries an empty callbackURL, as better-auth builds it.
    expect(link.endsWith('?callbackURL=')).toBe(true);
    const token = link.split('/reset-password/')[1]!.split('?')[0]!;
    expectCatalogueError(await client().post(`reset-password?token=${token}`, { newPassword: 'short' }), 'PASSWORD_TOO_SHORT');
    expect((await client().post(`reset-password?token=${token}`, { newPassword: NEW_PASSWORD })).status).toBe(200);
    expect((await client().post('sign-in/email', { email: user.email, password: NEW_PASSWORD })).status).toBe(200);
  });

  it('answers an unknown address exactly like a known one, and no sooner', async () => {
    const { user } = await signUp(client());
    const timed = async (email: string): Promise<{ ms: number; text: string; status: number }> => {
      const started = performance.now();
      const response = await client().post('forget-password', { email });
      return { ms: performance.now() - started, text: response.text, status: response.status };
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const a = await timed(user.email);
      const b = await timed(uniqueEmail('nobody'));
      expect(b.status).toBe(a.status);
      expect(b.text).toBe(a.text);
      known.push(a.ms);
      unknown.push(b.ms);
    }
    // Both paths wait out the same floor (400 ms), well above what the known path's work costs.
    expect(Math.min(...known, ...unknown)).toBeGreaterThanOrEqual(395);
    const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    expect(Math.abs(median(known) - median(unknown))).toBeLessThan(100);
    expect(system.smtp!.mailsTo(user.email).length).toBeGreaterThan(0);
  });

  it('changes the password with the current one; revoking other sessions answers a new token', async () => {
    const browser = client();
    const { user } = await signUp(browser);
    const other = client();
    expect((await other.post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);

    expectCatalogueError(await browser.post('change-password', { newPassword: NEW_PASSWORD, currentPassword: 'wrong password!' }), 'INVALID_PASSWORD');
    expectCatalogueError(await browser.post('change-password', { newPassword: 'short', currentPassword: DEFAULT_PASSWORD }), 'PASSWORD_TOO_SHORT');
    expectCatalogueError(await client().post('change-password', { newPassword: NEW_PASSWORD, currentPassword: DEFAULT_PASSWORD }), 'UNAUTHORIZED');

    const kept = await browser.post<{ token: string | null; user: UserJson }>('change-password', {
      newPassword: NEW_PASSWORD,
      currentPassword: DEFAULT_PASSWORD,
    });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.json).toMatchObject({ token: null, user: { id: user.id, email: user.email } });
    expect(await sessionOf(other)).not.toBeNull();

    const revoked = await browser.post<{ token: string | null; user: UserJson }>('change-password', {
      newPassword: DEFAULT_PASSWORD,
      currentPassword: NEW_PASSWORD,
      revokeOtherSessions: true,
    });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.json.token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(await sessionOf(other)).toBeNull();
    expect((await sessionOf(browser))?.session.token).toBe(revoked.json.token);
    expect((await client().post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);
  });

  it('verifies the password of the signed-in user', async () => {
    const browser = client();
    await signUp(browser);
    const ok = await browser.post('verify-password', { password: DEFAULT_PASSWORD });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toEqual({ status: true });
    expectCatalogueError(await browser.post('verify-password', { password: 'not the password' }), 'INVALID_PASSWORD');
    expectCatalogueError(await client().post('verify-password', { password: DEFAULT_PASSWORD }), 'UNAUTHORIZED');
  });

  it('sets a first password only for server calls, and only for a user without one', async () => {
    const browser = client();
    const { user } = await signUp(browser);
    // To clients the route does not exist; a wrong key is refused.
    expectCatalogueError(await browser.post('set-password', { newPassword: NEW_PASSWORD }), 'NOT_FOUND');
    expectCatalogueError(
      await client().post('set-password', { newPassword: NEW_PASSWORD, userId: user.id }, { headers: { 'x-api-key': 'wrong'.repeat(8) } }),
      'UNAUTHORIZED',
    );
    const server = { headers: { 'x-api-key': SERVER_API_KEY } };
    expectCatalogueError(await client().post('set-password', { newPassword: NEW_PASSWORD, userId: user.id }, server), 'PASSWORD_ALREADY_SET');
    // The session of the user works in place of a user id.
    expectCatalogueError(await browser.post('set-password', { newPassword: NEW_PASSWORD }, server), 'PASSWORD_ALREADY_SET');

    // A user without a password, as a social sign-in or an import leaves one: written to the log directly.
    const userId = generateId();
    const email = uniqueEmail('social');
    // Written as the services write the log: personal data encrypted, the reservation under its keyed name.
    const pool = await createDatabasePool(system.env.DATABASE_URL!, { maximumPoolSize: 1 });
    const log = await protectPersonalData(new PostgresEventStore({ databaseUrl: system.env.DATABASE_URL!, maximumPoolSize: 1 }), {
      databaseUrl: system.env.DATABASE_URL!,
      secrets: system.env.AUTH_SECRET!,
      pool,
    });
    try {
      const metadata = metadataAt(new Date());
      await log.store.append([
        domainWrite(streams.email(email), 'no_stream', [EmailReserved({ email, userId })], metadata),
        domainWrite(streams.user(userId), 'no_stream', [UserRegistered({ userId, email, name: 'Soc', image: null, emailVerified: true })], metadata),
      ]);
    } finally {
      await log.store.close();
      await log.close();
      await pool.end();
    }
    await waitFor(async () => (await system.query(`SELECT 1 FROM "user" WHERE id = $1`, [userId])).length === 1, {
      timeoutMs: 10_000,
      message: 'the imported user to be projected',
    });
    expectCatalogueError(await client().post('sign-in/email', { email, password: NEW_PASSWORD }), 'INVALID_EMAIL_OR_PASSWORD');
    expectCatalogueError(await client().post('set-password', { newPassword: 'short', userId }, server), 'PASSWORD_TOO_SHORT');
    const set = await client().post('set-password', { newPassword: NEW_PASSWORD, userId }, server);
    expect(set.status, set.text).toBe(200);
    expect(set.json).toEqual({ status: true });
    expect((await client().post('sign-in/email', { email, password: NEW_PASSWORD })).status).toBe(200);
    expectCatalogueError(await client().post('set-password', { newPassword: NEW_PASSWORD, userId }, server), 'PASSWORD_ALREADY_SET');
  });

  it('deletes at once with the password, or with a fresh session; a stale one must give the password', async () => {
    const stale = client();
    const { user } = await signUp(stale);
    const signedUpAt = Date.now();
    await waitFor(() => Date.now() > signedUpAt + 2050, { timeoutMs: 10_000, intervalMs: 100, message: 'the session to be no longer fresh' });
    expectCatalogueError(await stale.post('delete-user', {}), 'SESSION_EXPIRED');
    const deleted = await stale.post('delete-user', { password: DEFAULT_PASSWORD });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.json).toEqual({ success: true, message: 'User deleted' });
    expect(await system.query(`SELECT count(*)::int AS n FROM "user" WHERE id = $1`, [user.id])).toEqual([{ n: 0 }]);

    const fresh = client();
    const { user: other } = await signUp(fresh);
    const quick = await fresh.post('delete-user', {});
    // Either the session is still fresh (deleted), or this machine took two seconds to get here.
    if (quick.status === 200) expect(await system.query(`SELECT count(*)::int AS n FROM "user" WHERE id = $1`, [other.id])).toEqual([{ n: 0 }]);
    else expectCatalogueError(quick, 'SESSION_EXPIRED');
  });
});
