import { describe, expect, it } from 'vitest';
import type { MailJob } from '@portcullis/contracts';
import { mailLink } from './links.ts';
import { english } from './templates/locales/en.ts';
import { loadMailTemplates } from './templates/mail-templates.ts';
import { mailJob } from './templates/mail-job.test-support.ts';

const shipped = loadMailTemplates({ locale: 'en', directory: null });
const renderMail = (mail: MailJob, link: string, settings: { productName: string }) => shipped.render(mail, link, settings.productName);
const describeLifetime = (seconds: number): string => english.describeLifetime(seconds);

// A hostile name: every part must escape it.
const job = (overrides: Partial<MailJob>): MailJob => mailJob({ name: 'Ada <script>', ...overrides });
const base = 'https://auth.example.com/api/auth';
const links = { authBase: base, invitationUrl: 'https://app.example.com/accept-invitation/{id}' };
const invitation = (overrides: Partial<MailJob> = {}): MailJob =>
  job({
    kind: 'invitation',
    userId: 'inviter-1',
    to: 'grace@example.com',
    name: '',
    expiresAt: '2026-01-03T00:00:00.000Z',
    invitation: { organizationName: 'Analytical Engines', inviterName: 'Ada Lovelace', inviterEmail: 'ada@example.com', role: 'admin' },
    ...overrides,
  });

describe('mail links, built as better-auth builds them', () => {
  it('verification and change-email confirmation: verify-email with the callbackURL encoded, "/" by default', () => {
    expect(mailLink(job({}), 'jwt', links)).toBe(`${base}/verify-email?token=jwt&callbackURL=%2F`);
    expect(mailLink(job({ kind: 'change-email', callbackURL: '/settings?tab=1' }), 'jwt', links)).toBe(
      `${base}/verify-email?token=jwt&callbackURL=%2Fsettings%3Ftab%3D1`,
    );
  });

  it('password reset: the token in the path, an empty callbackURL without a redirectTo', () => {
    expect(mailLink(job({ kind: 'password-reset' }), 'tok', links)).toBe(`${base}/reset-password/tok?callbackURL=`);
    expect(mailLink(job({ kind: 'password-reset', callbackURL: 'https://app.example.com/reset' }), 'tok', links)).toBe(
      `${base}/reset-password/tok?callbackURL=https%3A%2F%2Fapp.example.com%2Freset`,
    );
  });

  it('delete account: the callback endpoint', () => {
    expect(mailLink(job({ kind: 'delete-account', callbackURL: '/bye' }), 'tok', links)).toBe(`${base}/delete-user/callback?token=tok&callbackURL=%2Fbye`);
  });

  it('invitation: the configured invitation URL with {id} replaced by the invitation id, URL-encoded', () => {
    expect(mailLink(invitation(), 'inv123', links)).toBe('https://app.example.com/accept-invitation/inv123');
    expect(mailLink(invitation(), 'a/b?c=$&', links)).toBe('https://app.example.com/accept-invitation/a%2Fb%3Fc%3D%24%26');
    const elsewhere = { ...links, invitationUrl: 'https://app.example.com/join?invitation={id}&from=mail' };
    expect(mailLink(invitation(), 'inv123', elsewhere)).toBe('https://app.example.com/join?invitation=inv123&from=mail');
  });
});

describe('the shipped English mail templates', () => {
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

  it('say in an invitation who invited whom to which organization with which role, with the link and expiry', () => {
    const link = 'https://app.example.com/accept-invitation/inv123';
    const mail = renderMail(invitation(), link, { productName: 'Acme' });
    expect(mail.subject).toBe('Ada Lovelace invited you to join Analytical Engines on Acme');
    expect(mail.text).toContain('Ada Lovelace (ada@example.com) invited you to join the organization Analytical Engines on Acme, with the role admin.');
    expect(mail.text).toContain(`Join Analytical Engines: ${link}`);
    expect(mail.text).toContain('This invitation expires in 48 hours (at Sat, 03 Jan 2026 00:00:00 GMT).');
    expect(mail.text).toContain('The invitation is for grace@example.com');
    expect(mail.text.startsWith('Hello,\n')).toBe(true);
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.html).toContain('Ada Lovelace (ada@example.com) invited you to join the organization Analytical Engines on Acme');
    expect(mail.html).toContain('This invitation expires in 48 hours');
  });

  it('name every role of an invitation, and fall back to the inviter address without a name', () => {
    const mail = renderMail(
      invitation({ invitation: { organizationName: 'Engines', inviterName: '', inviterEmail: 'ada@example.com', role: 'admin,member' } }),
      'https://x',
      { productName: 'Acme' },
    );
    expect(mail.subject).toBe('ada@example.com invited you to join Engines on Acme');
    expect(mail.text).toContain('ada@example.com invited you to join the organization Engines on Acme, with the roles admin and member.');
  });

  it('escape a hostile organization name and inviter in the HTML of an invitation, and keep the subject on one line', () => {
    const hostile = 'Evil <img src=x onerror="alert(1)"> & Co\r\nBcc: victim@example.com';
    const mail = renderMail(
      invitation({
        name: 'grace@example.com',
        invitation: { organizationName: hostile, inviterName: "Mallory <script>alert('x')</script>", inviterEmail: 'mallory@example.com', role: 'member' },
      }),
      'https://app.example.com/accept-invitation/inv1',
      { productName: 'Acme' },
    );
    expect(mail.html).not.toContain('<img');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('Evil &lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; Co Bcc: victim@example.com');
    expect(mail.html).toContain('Mallory &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; (mallory@example.com)');
    expect(mail.html).toContain('<title>Mallory &lt;script&gt;');
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.subject).toContain('Evil <img src=x onerror="alert(1)"> & Co Bcc: victim@example.com on Acme');
    expect(mail.text).toContain('Hello grace@example.com,');
  });

  it('still carry the link of an invitation job without its details', () => {
    const mail = renderMail(invitation({ invitation: null }), 'https://app.example.com/accept-invitation/inv1', { productName: 'Acme' });
    expect(mail.subject).toBe('You are invited to an organization on Acme');
    expect(mail.text).toContain('View the invitation: https://app.example.com/accept-invitation/inv1');
  });

  it('describe lifetimes in words', () => {
    expect(describeLifetime(3600)).toBe('1 hour');
    expect(describeLifetime(86400)).toBe('24 hours');
    expect(describeLifetime(1800)).toBe('30 minutes');
    expect(describeLifetime(2)).toBe('2 seconds');
  });
});
