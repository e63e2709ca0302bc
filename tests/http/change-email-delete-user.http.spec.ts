import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisClient, type Redis } from '@portcullis/platform';
import { DEFAULT_PASSWORD, expectCatalogueError, sha256Hex, signUp, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { servedSessionCacheKeys, testRedisUrl } from '../support/redis.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient } from '../support/system.ts';

/**
 * Change of email and deletion of the account, from the mailed links, against api, projector and mailer as
 * real processes (and the Redis session cache when Redis is reachable, to see a deleted user leave it).
 */
describe('change email and delete user (mailed links)', () => {
  const redisUrl = testRedisUrl();
  let system: MailSystem;
  let redis: Redis | null = null;

  beforeAll(async () => {
    if (!redisUrl) console.warn('[notice] change-email/delete-user: Redis not reachable; the session cache checks are skipped');
    system = await startMailSystem({
      redis: redisUrl !== null,
      // With the session_data cookie cache on: a change of email must not leave a stale user in it.
      env: {
        AUTH_CHANGE_EMAIL_ENABLED: 'true',
        AUTH_DELETE_USER_ENABLED: 'true',
        AUTH_DELETE_USER_VERIFICATION: 'true',
        AUTH_COOKIE_CACHE_ENABLED: 'true',
      },
    });
    if (redisUrl) redis = createRedisClient(redisUrl, { name: 'change-email-delete-user-spec' });
  });

  afterAll(async () => {
    redis?.disconnect();
    await system?.stop();
  });

  const client = (): HttpClient => new HttpClient(system.authUrl);
  const session = async (browser: HttpClient): Promise<SessionAnswerJson | null> =>
    (await browser.get<SessionAnswerJson | null>('get-session?disableRefresh=true')).json;

  /** A signed-up user whose email is verified through the mailed link. */
  async function verifiedUser(browser: HttpClient): Promise<{ email: string; id: string }> {
    const { user } = await signUp(browser);
    expect((await browser.post('send-verification-email', { email: user.email })).status).toBe(200);
    const verified = await browser.get(linkIn(await system.smtp!.waitForMail(user.email, { subject: /Verify/ })));
    expect(verified.status).toBe(302);
    expect((await session(browser))?.user.emailVerified).toBe(true);
    return { email: user.email, id: user.id };
  }

  it('changes an unverified email at once and mails a verification link to the new address', async () => {
    const browser = client();
    const { user } = await signUp(browser);
    // get-session writes the cookie cache; the change must not be hidden behind it.
    expect((await session(browser))?.user.email).toBe(user.email);
    expect(browser.cookie('better-auth.session_data')).toBeDefined();
    const newEmail = uniqueEmail('moved').toUpperCase();
    const changed = await browser.post('change-email', { newEmail, callbackURL: '/settings' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toEqual({ status: true });
    expect((await session(browser))?.user).toMatchObject({ email: newEmail.toLowerCase(), emailVerified: false });

    const link = linkIn(await system.smtp!.waitForMail(newEmail, { subject: /Verify/ }));
    expect(new URL(link).searchParams.get('callbackURL')).toBe('/settings');
    expect((await browser.get(link)).headers.get('location')).toBe('/settings');
    expect((await session(browser))?.user).toMatchObject({ email: newEmail.toLowerCase(), emailVerified: true });
    // The old address is free again; the new one is taken.
    expect((await client().post('sign-up/email', { name: 'Again', email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);
    expectCatalogueError(await client().post('sign-up/email', { name: 'Dup', email: newEmail, password: DEFAULT_PASSWORD }), 'USER_ALREADY_EXISTS');
  });

  it('asks a verified user to confirm from the current address; the link moves the email, unverified, and mails the new one', async () => {
    const browser = client();
    const { email, id } = await verifiedUser(browser);
    const newEmail = uniqueEmail('confirmed');
    expect((await browser.post('change-email', { newEmail, callbackURL: '/changed' })).status).toBe(200);
    // Nothing changes before the confirmation.
    expect((await session(browser))?.user.email).toBe(email);

    const confirmation = await system.smtp!.waitForMail(email, { subject: /Confirm the change/ });
    expect(confirmation.text).toContain(newEmail);
    const confirmLink = linkIn(confirmation);
    // Clicked while signed in as someone else: refused.
    const stranger = client();
    await signUp(stranger);
    expect((await stranger.get(confirmLink)).headers.get('location')).toBe('/changed?error=unauthorized');

    const confirmed = await browser.get(confirmLink);
    expect(confirmed.status).toBe(302);
    expect(confirmed.headers.get('location')).toBe('/changed');
    expect((await session(browser))?.user).toMatchObject({ id, email: newEmail, emailVerified: false });
    // A confirmation works once: the address it confirms from is gone.
    expect((await browser.get(confirmLink)).headers.get('location')).toBe('/changed?error=invalid_token');

    const verify = linkIn(await system.smtp!.waitForMail(newEmail, { subject: /Verify/ }));
    expect((await browser.get(verify)).headers.get('location')).toBe('/changed');
    expect((await session(browser))?.user).toMatchObject({ email: newEmail, emailVerified: true });
    expect((await client().post('sign-in/email', { email: newEmail, password: DEFAULT_PASSWORD })).status).toBe(200);
    expectCatalogueError(await client().post('sign-in/email', { email, password: DEFAULT_PASSWORD }), 'INVALID_EMAIL_OR_PASSWORD');
  });

  it('refuses the same email, an email in use, and a malformed one', async () => {
    const browser = client();
    const { user } = await signUp(browser);
    const { user: other } = await signUp(client());
    expectCatalogueError(await browser.post('change-email', { newEmail: user.email.toUpperCase() }), 'EMAIL_IS_THE_SAME');
    expectCatalogueError(await browser.post('change-email', { newEmail: other.email }), 'COULDNT_UPDATE_YOUR_EMAIL');
    expectCatalogueError(await browser.post('change-email', { newEmail: 'not-an-email' }), 'VALIDATION_ERROR');
    expectCatalogueError(await client().post('change-email', { newEmail: uniqueEmail('x') }), 'UNAUTHORIZED');
  });

  it('deletes from the mailed link: every session, account and cache entry goes; the link works once', async () => {
    const browser = client();
    const { user, token } = await signUp(browser);
    const second = client();
    expect((await second.post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);
    const logId = ((await system.query<{ id: string }>('SELECT id FROM event_log_identity'))[0]!).id;
    const keys = redis ? await servedSessionCacheKeys(redis, system.env.REDIS_KEY_PREFIX!, logId) : null;
    if (redis) expect(keys).not.toBeNull();
    if (redis && keys) expect(await redis.exists(keys.session(sha256Hex(token)))).toBe(1);

    expectCatalogueError(await browser.post('delete-user', { password: 'wrong password!' }), 'INVALID_PASSWORD');
    const asked = await browser.post('delete-user', { callbackURL: '/goodbye' });
    expect(asked.status, asked.text).toBe(200);
    expect(asked.json).toEqual({ success: true, message: 'Verification email sent' });
    const mail = await system.smtp!.waitForMail(user.email, { subject: /deletion/ });
    expect(mail.text).toContain('This link expires in 24 hours');
    const link = linkIn(mail);
    const token32 = new URL(link).searchParams.get('token')!;
    expect(token32).toMatch(/^[0-9a-z]{32}$/);
    expect(new URL(link).searchParams.get('callbackURL')).toBe('/goodbye');

    // The link needs the user's own session.
    expectCatalogueError(await client().get(link.replace(/&callbackURL=[^&]*/, '')), 'FAILED_TO_GET_USER_INFO');
    const stranger = client();
    await signUp(stranger);
    expectCatalogueError(await stranger.get(link), 'INVALID_TOKEN');

    const deleted = await browser.get(link);
    expect(deleted.status).toBe(302);
    expect(deleted.headers.get('location')).toBe('/goodbye');
    expect(await session(browser)).toBeNull();
    expect(await session(second)).toBeNull();
    for (const table of ['"user" WHERE id = $1', 'session WHERE "userId" = $1', 'account WHERE "userId" = $1', 'verification WHERE value = $1']) {
      expect(await system.query(`SELECT count(*)::int AS n FROM ${table}`, [user.id]), table).toEqual([{ n: 0 }]);
    }
    if (redis && keys) {
      expect(await redis.exists(keys.session(sha256Hex(token)), keys.user(user.id), keys.userSessions(user.id))).toBe(0);
    }
    expectCatalogueError(await client().post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD }), 'INVALID_EMAIL_OR_PASSWORD');

    // Used: a new account under the same address cannot be deleted with it.
    const again = client();
    await signUp(again, { email: user.email });
    expectCatalogueError(await again.get(link), 'INVALID_TOKEN');
    expect(await session(again)).not.toBeNull();
  });

  it('deletes at once with the token in the body of POST /delete-user', async () => {
    const browser = client();
    const { user } = await signUp(browser);
    expect((await browser.post('delete-user', {})).status).toBe(200);
    const token = new URL(linkIn(await system.smtp!.waitForMail(user.email, { subject: /deletion/ }))).searchParams.get('token')!;
    expectCatalogueError(await browser.post('delete-user', { token: 'x'.repeat(32) }), 'INVALID_TOKEN');
    const deleted = await browser.post('delete-user', { token });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.json).toEqual({ success: true, message: 'User deleted' });
    expect(await session(browser)).toBeNull();
  });
});
