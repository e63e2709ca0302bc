import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, expectCatalogueError, signUp, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { waitFor } from '../support/processes.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient } from '../support/system.ts';

interface MailboxAnswer {
  messages: { jobId: string; to: string; subject: string; text: string; html: string }[];
}

/**
 * The embedded default: no SMTP_URL, so the mailer delivers into the dev mailbox, read through
 * GET /ops/mailbox. Links here live 2 seconds, to walk expired links; the rest is better-auth's defaults
 * (no verification on sign-up or before sign-in, change email off), with delete-user on, confirmed by mail.
 */
describe('mail without SMTP: the dev mailbox, expired links and the defaults', () => {
  let system: MailSystem;

  beforeAll(async () => {
    system = await startMailSystem({
      smtp: false,
      env: {
        AUTH_EMAIL_VERIFICATION_EXPIRES_IN: '2',
        AUTH_RESET_PASSWORD_EXPIRES_IN: '2',
        AUTH_DELETE_USER_ENABLED: 'true',
        AUTH_DELETE_USER_VERIFICATION: 'true',
        AUTH_DELETE_USER_EXPIRES_IN: '2',
      },
    });
  });

  afterAll(async () => {
    await system?.stop();
  });

  const client = (): HttpClient => new HttpClient(system.authUrl);
  const ops = (): HttpClient => new HttpClient(system.baseUrl);

  async function mailbox(to: string): Promise<MailboxAnswer['messages']> {
    const response = await ops().get<MailboxAnswer>(`ops/mailbox?to=${encodeURIComponent(to)}`);
    expect(response.status, response.text).toBe(200);
    return response.json.messages;
  }

  async function waitForMailbox(to: string, subject: RegExp): Promise<MailboxAnswer['messages'][number]> {
    let found: MailboxAnswer['messages'][number] | undefined;
    await waitFor(async () => (found = (await mailbox(to)).find((m) => subject.test(m.subject))) !== undefined, {
      timeoutMs: 20_000,
      message: `a mail to ${to} matching ${subject} in the dev mailbox`,
    });
    return found!;
  }

  /** Waits until the clock is past a link's expiry (a condition on time, not a fixed sleep). */
  async function pastExpiry(expiresAtMs: number): Promise<void> {
    await waitFor(() => Date.now() > expiresAtMs + 50, { timeoutMs: 10_000, intervalMs: 100, message: 'the link to expire' });
  }

  it('keeps better-auth defaults: no mail on sign-up, sign-in without verification, change email off', async () => {
    const browser = client();
    const { user } = await signUp(browser);
    expect((await client().post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD })).status).toBe(200);
    expectCatalogueError(await browser.post('change-email', { newEmail: uniqueEmail('off') }), 'CHANGE_EMAIL_DISABLED');
    expect((await client().post('forget-password', { email: user.email })).status).toBe(200);
    await waitForMailbox(user.email, /Reset your/);
    await system.mailerIdle();
    expect((await mailbox(user.email)).map((m) => m.subject)).toEqual(['Reset your Portcullis password']);
  });

  it('delivers into the dev mailbox, readable through the ops endpoints; a link expires', async () => {
    const browser = client();
    const { user } = await signUp(browser);
    expectCatalogueError(await browser.post('send-verification-email', { email: uniqueEmail('other') }), 'EMAIL_MISMATCH');
    expect((await client().post('send-verification-email', { email: user.email, callbackURL: '/verified' })).status).toBe(200);
    const mail = await waitForMailbox(user.email, /Verify/);
    expect(mail.html).toContain('Verify email address');
    expect(mail.text).toContain('This link expires in 2 seconds');
    const deliveries = await ops().get<{ deliveries: { jobId: string; status: string; transport: string }[] }>('ops/mail/deliveries?status=sent');
    expect(deliveries.json.deliveries.find((d) => d.jobId === mail.jobId)).toMatchObject({ status: 'sent', transport: 'dev-mailbox' });
    expectCatalogueError(await ops().get('ops/mailbox', { headers: { 'x-api-key': 'not-the-key' } }), 'UNAUTHORIZED');

    const link = linkIn(mail);
    const payload = JSON.parse(Buffer.from(new URL(link).searchParams.get('token')!.split('.')[1]!, 'base64url').toString()) as { exp: number };
    await pastExpiry(payload.exp * 1000);
    const expired = await client().get(link);
    expect(expired.status).toBe(302);
    expect(expired.headers.get('location')).toBe('/verified?error=token_expired');
    expectCatalogueError(await client().get(link.replace(/&callbackURL=[^&]*/, '')), 'TOKEN_EXPIRED');
    expect((await browser.get<SessionAnswerJson>('get-session')).json.user.emailVerified).toBe(false);
  });

  it('refuses an expired reset link with INVALID_TOKEN, on the redirect and on the reset', async () => {
    const { user } = await signUp(client());
    const requestedAt = Date.now();
    expect((await client().post('forget-password', { email: user.email, redirectTo: '/reset' })).status).toBe(200);
    const link = linkIn(await waitForMailbox(user.email, /Reset your/));
    const token = link.split('/reset-password/')[1]!.split('?')[0]!;
    await pastExpiry(requestedAt + 2000);
    expect((await client().get(link)).headers.get('location')).toBe(`${system.baseUrl}/reset?error=INVALID_TOKEN`);
    expectCatalogueError(await client().post('reset-password', { token, newPassword: 'a brand new passphrase' }), 'INVALID_TOKEN');
  });

  it('refuses an expired delete link, and the account stays', async () => {
    const browser = client();
    const { user } = await signUp(browser);
    const askedAt = Date.now();
    const asked = await browser.post('delete-user', { callbackURL: '/bye' });
    expect(asked.json).toEqual({ success: true, message: 'Verification email sent' });
    const link = linkIn(await waitForMailbox(user.email, /deletion/));
    await pastExpiry(askedAt + 2000);
    expectCatalogueError(await browser.get(link), 'INVALID_TOKEN');
    expect((await browser.get<SessionAnswerJson>('get-session')).json.user.id).toBe(user.id);
  });
});
