import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, uniqueEmail } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient, parseSetCookie, type HttpResponse } from '../support/system.ts';

/**
 * No secret in the logs (STYLE: secrets never logged): the flows that handle passwords, session tokens,
 * signed cookies, mailed tokens and the server key run against api, projector and mailer as real processes
 * logging at debug, and none of those values may appear anywhere in what the processes printed.
 */
describe('logs at debug level', () => {
  let system: MailSystem;
  const secrets = new Map<string, string>();
  const SERVER_API_KEY = randomBytes(24).toString('base64url');

  /** Remembers a value that must never be printed, in every form it travels in. */
  function secret(label: string, value: string | null | undefined): void {
    if (!value || value.length < 8) return;
    secrets.set(value, label);
    const encoded = encodeURIComponent(value);
    if (encoded !== value) secrets.set(encoded, `${label} (URL-encoded)`);
  }

  /** Every cookie value and bearer token an answer hands out. */
  function keepCredentials(label: string, response: HttpResponse): void {
    for (const { name, value } of response.setCookies.map(parseSetCookie)) {
      secret(`${label}: cookie ${name}`, decodeURIComponent(value));
      // The signature alone is as good as the secret for forging nothing, but it is still a credential part.
      const signature = decodeURIComponent(value).split('.').at(-1);
      if (signature?.length === 44) secret(`${label}: cookie ${name} signature`, signature);
    }
    secret(`${label}: set-auth-token`, response.headers.get('set-auth-token'));
    const token = (response.json as { token?: unknown } | undefined)?.token;
    if (typeof token === 'string') secret(`${label}: token`, token);
  }

  beforeAll(async () => {
    system = await startMailSystem({
      env: {
        LOG_LEVEL: 'debug',
        AUTH_COOKIE_CACHE_ENABLED: 'true',
        AUTH_SERVER_API_KEY: SERVER_API_KEY,
        AUTH_RATE_LIMIT_ENABLED: 'true',
        // Room for the flows below; /ok is kept tight so one request is refused.
        AUTH_RATE_LIMIT_RULES: '/ok=1/60,/sign-in*=50/10,/sign-up*=50/10,/change-password*=50/10,/forget-password*=50/60,/send-verification-email=50/60',
      },
    });
    secret('AUTH_SECRET', system.env.AUTH_SECRET);
    secret('AUTH_SERVER_API_KEY', SERVER_API_KEY);
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('prints no password, token, signed cookie value, mailed token or AUTH_SECRET', { timeout: 90_000 }, async () => {
    const client = (): HttpClient => new HttpClient(system.authUrl);
    const passwords = {
      signUp: `pw-signup-${randomBytes(6).toString('hex')}`,
      wrong: `pw-wrong-${randomBytes(6).toString('hex')}`,
      unknown: `pw-unknown-${randomBytes(6).toString('hex')}`,
      changed: `pw-changed-${randomBytes(6).toString('hex')}`,
      reset: `pw-reset-${randomBytes(6).toString('hex')}`,
      malformed: `pw-malformed-${randomBytes(6).toString('hex')}`,
    };
    for (const [label, value] of Object.entries(passwords)) secret(`password ${label}`, value);

    // Sign-up, get-session (cookie, cookie cache, bearer), sign-in right and wrong.
    const browser = client();
    const up = await signUp(browser, { password: passwords.signUp, email: uniqueEmail('logs') });
    keepCredentials('sign-up', up.response);
    const email = up.user.email;
    keepCredentials('get-session', await browser.get('get-session'));
    await browser.get('get-session');
    await client().get('get-session', { headers: { authorization: `Bearer ${up.token}` } });
    await client().get('get-session', { headers: { authorization: `Bearer ${encodeURIComponent(up.response.headers.get('set-auth-token')!)}` } });
    expect((await client().post('sign-in/email', { email, password: passwords.wrong })).status).toBe(401);
    expect((await client().post('sign-in/email', { email: uniqueEmail('nobody'), password: passwords.unknown })).status).toBe(401);
    const second = client();
    const signedIn = await second.post('sign-in/email', { email, password: passwords.signUp, rememberMe: false });
    expect(signedIn.status, signedIn.text).toBe(200);
    keepCredentials('sign-in', signedIn);

    // Session management and the user.
    expect((await browser.post('update-user', { name: 'Renamed' })).status).toBe(200);
    expect((await browser.get('list-sessions')).status).toBe(200);
    expect((await browser.post('revoke-session', { token: (signedIn.json as { token: string }).token })).status).toBe(200);

    // Passwords: change, verify, then a reset from the mailed link.
    const changed = await browser.post('change-password', {
      currentPassword: passwords.signUp,
      newPassword: passwords.changed,
      revokeOtherSessions: true,
    });
    expect(changed.status, changed.text).toBe(200);
    keepCredentials('change-password', changed);
    expect((await browser.post('verify-password', { password: passwords.changed })).status).toBe(200);

    expect((await client().post('forget-password', { email, redirectTo: '/reset' })).status).toBe(200);
    const resetMail = await system.smtp!.waitForMail(email, { subject: /Reset your/ });
    const resetLink = linkIn(resetMail);
    const resetToken = resetLink.split('/reset-password/')[1]!.split('?')[0]!;
    secret('mailed reset token', resetToken);
    expect((await client().get(resetLink)).status).toBe(302);
    expect((await client().post('reset-password', { newPassword: passwords.reset, token: resetToken })).status).toBe(200);

    // Email verification from the mailed link.
    const again = client();
    keepCredentials('sign-in after reset', await again.post('sign-in/email', { email, password: passwords.reset }));
    expect((await again.post('send-verification-email', { email, callbackURL: '/verified' })).status).toBe(200);
    const verifyMail = await system.smtp!.waitForMail(email, { subject: /erif/ });
    const verifyLink = linkIn(verifyMail);
    const verifyToken = new URL(verifyLink).searchParams.get('token')!;
    secret('mailed verification token', verifyToken);
    expect((await again.get(verifyLink)).status).toBeLessThan(400);

    // Refusals and errors: malformed JSON around a password, untrusted origin, rate limit, bad tokens.
    const malformed = await client().request('POST', 'sign-in/email', {
      rawBody: `{"email":"${email}","password":"${passwords.malformed}"`,
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect((await again.post('sign-out', {}, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    await client().get('ok');
    expect((await client().get('ok')).status).toBe(429);
    const forgedToken = `forged-${randomBytes(16).toString('hex')}`;
    secret('a token in a URL', forgedToken);
    await client().get(`reset-password/${forgedToken}?callbackURL=%2Freset`);
    await client().get(`verify-email?token=${forgedToken}`);
    await client().post('set-password', { newPassword: passwords.reset }, { headers: { authorization: `Bearer ${SERVER_API_KEY}` } });
    expect((await again.post('sign-out', {})).status).toBe(200);

    // Stopped first, so every line the processes wrote (up to their exit) has arrived.
    await system.stop();
    const output = [system.api, system.projector, system.mailer].map((p) => `--- ${p.name}\n${p.output()}`).join('\n');
    // The processes did log these flows, at debug.
    expect(output).toMatch(/"level":30.*incoming request/);
    expect(output).toMatch(/"level":20/);
    const leaks = [...secrets].filter(([value]) => output.includes(value)).map(([value, label]) => {
      const at = output.indexOf(value);
      return `${label}: …${output.slice(Math.max(0, at - 160), at + value.length + 40)}…`;
    });
    expect(leaks).toEqual([]);
  });
});
