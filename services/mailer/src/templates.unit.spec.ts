import { describe, expect, it } from 'vitest';
import type { MailJob } from '@portcullis/contracts';
import { retryDelayMs } from './delivery-worker.ts';
import { mailLink } from './links.ts';
import { describeLifetime, renderMail } from './templates.ts';

const job = (overrides: Partial<MailJob>): MailJob => ({
  jobId: '00000000-0000-4000-8000-000000000001',
  kind: 'verification',
  userId: 'u1',
  to: 'ada@example.com',
  name: 'Ada <script>',
  sealedToken: 'v1.x',
  callbackURL: null,
  expiresAt: '2026-01-01T01:00:00.000Z',
  newEmail: null,
  requestedAt: '2026-01-01T00:00:00.000Z',
  traceparent: null,
  ...overrides,
});
const base = 'https://auth.example.com/api/auth';

describe('mail links, built as better-auth builds them', () => {
  it('verification and change-email confirmation: verify-email with the callbackURL encoded, "/" by default', () => {
    expect(mailLink(job({}), 'jwt', base)).toBe(`${base}/verify-email?token=jwt&callbackURL=%2F`);
    expect(mailLink(job({ kind: 'change-email', callbackURL: '/settings?tab=1' }), 'jwt', base)).toBe(
      `${base}/verify-email?token=jwt&callbackURL=%2Fsettings%3Ftab%3D1`,
    );
  });

  it('password reset: the token in the path, an empty callbackURL without a redirectTo', () => {
    expect(mailLink(job({ kind: 'password-reset' }), 'tok', base)).toBe(`${base}/reset-password/tok?callbackURL=`);
    expect(mailLink(job({ kind: 'password-reset', callbackURL: 'https://app.example.com/reset' }), 'tok', base)).toBe(
      `${base}/reset-password/tok?callbackURL=https%3A%2F%2Fapp.example.com%2Freset`,
    );
  });

  it('delete account: the callback endpoint', () => {
    expect(mailLink(job({ kind: 'delete-account', callbackURL: '/bye' }), 'tok', base)).toBe(`${base}/delete-user/callback?token=tok&callbackURL=%2Fbye`);
  });
});

describe('mail templates', () => {
  it('carry the product name, the link and the expiry, in text and HTML, with HTML escaped', () => {
    const link = `${base}/verify-email?token=a&callbackURL=%2F`;
    const mail = renderMail(job({}), link, { productName: 'Acme' });
    expect(mail.subject).toBe('Verify your email address for Acme');
    expect(mail.text).toContain(link);
    expect(mail.text).toContain('This link expires in 1 hour (at Thu, 01 Jan 2026 01:00:00 GMT).');
    expect(mail.text).toContain('Hello Ada <script>,');
    expect(mail.html).toContain(`href="${link.replace(/&/g, '&amp;')}"`);
    expect(mail.html).toContain('Hello Ada &lt;script&gt;,');
    expect(mail.html).not.toContain('<script>');
  });

  it('name the new address in a change-email confirmation', () => {
    const mail = renderMail(job({ kind: 'change-email', newEmail: 'ada@new.example' }), 'https://x', { productName: 'Acme' });
    expect(mail.text).toContain('from ada@example.com to ada@new.example');
  });

  it('describe lifetimes in words', () => {
    expect(describeLifetime(3600)).toBe('1 hour');
    expect(describeLifetime(86400)).toBe('24 hours');
    expect(describeLifetime(1800)).toBe('30 minutes');
    expect(describeLifetime(2)).toBe('2 seconds');
  });
});

describe('retry backoff', () => {
  it('doubles from the base up to the cap, within ±20 %', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 1000, 10_000, () => 0.5))).toEqual([1000, 2000, 4000, 8000, 10_000]);
    expect(retryDelayMs(1, 1000, 10_000, () => 0)).toBe(800);
    expect(retryDelayMs(1, 1000, 10_000, () => 1)).toBe(1200);
  });
});
