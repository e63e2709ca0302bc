import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLogMailBus } from '@portcullis/platform';
import { createEventLogDatabase, type EventLogDatabase } from '../support/event-log.ts';
import { mailerEnv, sealedJob, startMailer } from '../support/mailer-process.ts';
import { fatalLinesOf, type ServiceProcess } from '../support/processes.ts';
import { linkIn, TestSmtpServer } from '../support/smtp.ts';

function templatesDirectory(files: Record<string, string>): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'mailer-templates-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(directory, name), content);
  return directory;
}

/**
 * The mailer process sends in MAIL_LOCALE's shipped language, with the files of MAIL_TEMPLATES_DIR in place of
 * the shipped templates they name, over a real SMTP server; and it refuses to start on a template it could
 * not render or a language it does not ship, before it takes any job.
 */
describe('mailer: MAIL_LOCALE and MAIL_TEMPLATES_DIR', () => {
  let db: EventLogDatabase;
  let smtp: TestSmtpServer;
  let mailer: ServiceProcess;
  let env: Record<string, string>;
  let bus: EventLogMailBus;
  const directories: string[] = [];

  beforeAll(async () => {
    db = await createEventLogDatabase('mail_templates');
    smtp = await TestSmtpServer.start();
    const overrides = templatesDirectory({
      'password-reset.subject.txt': '{{productName}}: neues Passwort für {{name}}\n',
      'password-reset.html': '<p>Hallo {{name}},</p>\n<p><a href="{{link}}">Passwort wählen</a> ({{expiresIn}})</p>\n',
    });
    directories.push(overrides);
    env = mailerEnv(db.url, smtp.url, { MAIL_LOCALE: 'de', MAIL_TEMPLATES_DIR: overrides, MAIL_PRODUCT_NAME: 'Acme' });
    mailer = startMailer(env);
    bus = new EventLogMailBus({ store: db.store, pool: db.pool, databaseUrl: db.url, control: db.control, log: { info() {}, warn() {}, error() {} } });
  });

  afterAll(async () => {
    await mailer?.stop();
    await smtp?.close();
    await db?.close();
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  });

  it('sends the overridden parts from the directory, the others shipped in German, escaping a hostile name in HTML', async () => {
    const hostile = 'Mallory <img src=x onerror="alert(1)"> & Co';
    const reset = sealedJob(env, 'reset@example.test', { name: hostile });
    const verification = sealedJob(env, 'verify@example.test', { kind: 'verification', name: 'Grete', callbackURL: null });
    await bus.publish([reset, verification]);

    const resetMail = await smtp.waitForMail('reset@example.test');
    const link = `http://127.0.0.1:3999/api/auth/reset-password/token-for-${reset.jobId}?callbackURL=%2Freset`;
    expect(resetMail.subject).toBe(`Acme: neues Passwort für ${hostile}`);
    expect(resetMail.html).toContain('<p>Hallo Mallory &lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; Co,</p>');
    expect(resetMail.html).not.toContain('<img');
    expect(resetMail.html).toContain(`<a href="${link}">Passwort wählen</a> (1 Stunde)`);
    // No text template in the directory: the shipped German one, where the name stays as written.
    expect(resetMail.text).toContain(`Hallo ${hostile},`);
    expect(resetMail.text).toContain(`Neues Passwort wählen: ${link}`);
    expect(linkIn(resetMail)).toBe(link);

    const verificationMail = await smtp.waitForMail('verify@example.test');
    expect(verificationMail.subject).toBe('Bestätigen Sie Ihre E-Mail-Adresse für Acme');
    expect(verificationMail.text).toContain('Bitte bestätigen Sie, dass verify@example.test Ihre E-Mail-Adresse für Ihr Acme-Konto ist.');
    expect(verificationMail.text).toContain('Dieser Link ist 1 Stunde gültig');
    expect(verificationMail.html).toContain('<html lang="de">');
  });

  it('refuses to start on a template naming a variable its mail lacks, saying which file, line and variable', async () => {
    const broken = templatesDirectory({ 'invitation.text.txt': 'Join {{organizationName}}:\n{{link}}\nReset: {{newEmail}}\n' });
    directories.push(broken);
    const refused = startMailer({ ...env, MAIL_TEMPLATES_DIR: broken, MAILER_METRICS_PORT: '0' });
    const exit = await refused.exited;
    expect(exit).toEqual({ code: 78, signal: null });
    expect(fatalLinesOf(refused.output())).toEqual([
      `mail template ${path.join(broken, 'invitation.text.txt')}, line 3: unknown variable "newEmail"; this mail has productName, to, name, link, expiresIn, expiresAt, organizationName, inviterName, inviterEmail, inviter, inviterWithEmail, roles, role, severalRoles, subject`,
    ]);
  });

  it('refuses to start on a directory it cannot read and on a language it does not ship, listing the shipped ones', async () => {
    const missing = startMailer({ ...env, MAIL_TEMPLATES_DIR: '/nonexistent/mail-templates' });
    expect(await missing.exited).toEqual({ code: 78, signal: null });
    expect(fatalLinesOf(missing.output())).toEqual(['MAIL_TEMPLATES_DIR /nonexistent/mail-templates cannot be read (ENOENT)']);

    const french = startMailer({ ...env, MAIL_LOCALE: 'fr' });
    expect(await french.exited).toEqual({ code: 78, signal: null });
    expect(french.output()).toContain('MAIL_LOCALE: must be a language the mails are shipped in: en, de');
  });
});
