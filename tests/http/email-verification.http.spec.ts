import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, expectCatalogueError, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient } from '../support/system.ts';

/**
 * Email verification end to end: api, projector and mailer as real processes, mail over real SMTP, every
 * step taken from the link the mail carries. Verification is required for sign-in, sent on sign-up, and
 * signs the user in when the link is used.
 */
describe('email verification (mailed links)', () => {
  let system: MailSystem;

  beforeAll(async () => {
    system = await startMailSystem({
      env: {
        AUTH_REQUIRE_EMAIL_VERIFICATION: 'true',
        AUTH_EMAIL_VERIFICATION_AUTO_SIGN_IN: 'true',
        AUTH_CHANGE_EMAIL_ENABLED: 'true',
        AUTH_DELETE_USER_ENABLED: 'true',
      },
    });
  });

  afterAll(async () => {
    await system?.stop();
  });

  const client = (): HttpClient => new HttpClient(system.authUrl);

  it('mails a link on sign-up, refuses sign-in until it is used (re-sending it), then verifies and signs in', async () => {
    const email = uniqueEmail('verify');
    const browser = client();
    const signedUp = await browser.post<{ token: string | null; user: { emailVerified: boolean } }>('sign-up/email', {
      name: 'Vera',
      email,
      password: DEFAULT_PASSWORD,
      callbackURL: '/welcome',
    });
    expect(signedUp.status, signedUp.text).toBe(200);
    // Required verification: no session before the email is verified.
    expect(signedUp.json.token).toBeNull();
    expect(signedUp.setCookies).toEqual([]);

    const first = await system.smtp!.waitForMail(email, { subject: /Verify your email/ });
    expect(first.subject).toBe('Verify your email address for Portcullis');
    expect(first.text).toContain('This link expires in 1 hour');
    expect(first.html).toContain('Verify email address');
    const link = linkIn(first);
    expect(link.startsWith(`${system.authUrl}/verify-email?token=`)).toBe(true);
    expect(new URL(link).searchParams.get('callbackURL')).toBe('/welcome');

    const refused = await browser.post('sign-in/email', { email, password: DEFAULT_PASSWORD });
    expectCatalogueError(refused, 'EMAIL_NOT_VERIFIED');
    const resent = await system.smtp!.waitForMail(email, { count: 2, subject: /Verify your email/ });
    expect(linkIn(resent)).not.toBe(link);

    const verified = await browser.get(link);
    expect(verified.status).toBe(302);
    expect(verified.headers.get('location')).toBe('/welcome');
    // Auto sign-in after verification: the redirect carries a session cookie.
    const session = await browser.get<SessionAnswerJson>('get-session');
    expect(session.json.user).toMatchObject({ email, emailVerified: true });

    const again = await client().post('sign-in/email', { email, password: DEFAULT_PASSWORD });
    expect(again.status, again.text).toBe(200);
    // Verified now: asking for another link is refused rather than mailing one.
    expectCatalogueError(await browser.post('send-verification-email', { email }), 'EMAIL_ALREADY_VERIFIED');
  });

  it('answers a reused link as a success that changes nothing, and a tampered one with invalid_token', async () => {
    const email = uniqueEmail('reuse');
    await client().post('sign-up/email', { name: 'Rex', email, password: DEFAULT_PASSWORD });
    const link = linkIn(await system.smtp!.waitForMail(email));

    const first = await client().get(link.replace(/callbackURL=[^&]*/, 'callbackURL=%2Fdone'));
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe('/done');
    const reused = await client().get(link.replace(/callbackURL=[^&]*/, 'callbackURL=%2Fdone'));
    expect(reused.status).toBe(302);
    expect(reused.headers.get('location')).toBe('/done');
    const asJson = await client().get<{ status: boolean; user: null }>(link.replace(/&callbackURL=[^&]*/, ''));
    expect(asJson.status).toBe(200);
    expect(asJson.json).toEqual({ status: true, user: null });

    const token = new URL(link).searchParams.get('token')!;
    const tampered = `${token.slice(0, -3)}${token.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    const withCallback = await client().get(`verify-email?token=${tampered}&callbackURL=${encodeURIComponent('/done?step=2')}`);
    expect(withCallback.status).toBe(302);
    expect(withCallback.headers.get('location')).toBe('/done?step=2&error=invalid_token');
    // better-auth answers a bad link 401 when there is no callbackURL, whatever its code's usual status.
    const refused = await client().get(`verify-email?token=${tampered}`);
    expect({ status: refused.status, json: refused.json }).toEqual({ status: 401, json: { code: 'INVALID_TOKEN', message: 'invalid token' } });
  });

  it('redirects with user_not_found for a link whose user was deleted since', async () => {
    const other = uniqueEmail('gone2');
    await client().post('sign-up/email', { name: 'Gone Two', email: other, password: DEFAULT_PASSWORD });
    // Used once (auto sign-in), then the user deletes itself; the same link comes back later.
    const otherLink = linkIn(await system.smtp!.waitForMail(other));
    const verifier = client();
    expect((await verifier.get(otherLink)).status).toBe(302);
    const deleted = await verifier.post('delete-user', { password: DEFAULT_PASSWORD });
    expect(deleted.status, deleted.text).toBe(200);
    const late = await client().get(otherLink.replace(/callbackURL=[^&]*/, 'callbackURL=%2Fafter'));
    expect(late.headers.get('location')).toBe('/after?error=user_not_found');
    // Without a callbackURL, better-auth answers 401 for every bad link.
    const refused = await client().get(otherLink.replace(/&callbackURL=[^&]*/, ''));
    expect({ status: refused.status, json: refused.json }).toEqual({ status: 401, json: { code: 'USER_NOT_FOUND', message: 'User not found' } });
  });

  it('answers a sign-up with a taken address like a new one, and mails nothing', async () => {
    const email = uniqueEmail('taken');
    const first = await client().post<{ token: null; user: { id: string } }>('sign-up/email', { name: 'First', email, password: DEFAULT_PASSWORD });
    await system.smtp!.waitForMail(email);
    const second = await client().post<{ token: null; user: { id: string; email: string; emailVerified: boolean } }>('sign-up/email', {
      name: 'Second',
      email: email.toUpperCase(),
      password: 'another passphrase',
    });
    expect(second.status, second.text).toBe(200);
    expect(second.json.token).toBeNull();
    expect(second.json.user).toMatchObject({ email, emailVerified: false });
    expect(second.json.user.id).not.toBe(first.json.user.id);
    expect(await system.query(`SELECT name FROM "user" WHERE email = $1`, [email])).toEqual([{ name: 'First' }]);
    // The first account's verification is the only mail: a second sign-up mails nothing.
    const verified = await client().get(linkIn(system.smtp!.mailsTo(email)[0]!));
    expect(verified.status).toBe(302);
    await system.mailerIdle();
    expect(system.smtp!.mailsTo(email)).toHaveLength(1);
  });
});
