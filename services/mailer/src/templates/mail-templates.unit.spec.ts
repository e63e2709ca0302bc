import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mailKinds, mailLocales } from '@portcullis/contracts';
import { loadMailTemplates, MailTemplateError, templateFileName } from './mail-templates.ts';
import { mailJob } from './mail-job.test-support.ts';
import { compileTemplate, escapeHtml, renderTemplate, TemplateSyntaxError } from './template-language.ts';

const job = mailJob;

const directories: string[] = [];
function templatesDirectory(files: Record<string, string>): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'mail-templates-'));
  directories.push(directory);
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(directory, name), content);
  return directory;
}
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function refusal(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(MailTemplateError);
    return (error as Error).message;
  }
  throw new Error('expected the templates to be refused');
}

describe('the template language', () => {
  const render = (source: string, values: Record<string, string>, escape = (v: string) => v) =>
    renderTemplate(compileTemplate(source, Object.keys(values)), values, escape);

  it('puts variables in, keeps a section when its variable is not empty and an inverted one when it is', () => {
    expect(render('Hello{{#name}} {{ name }}{{/name}},', { name: 'Ada' })).toBe('Hello Ada,');
    expect(render('Hello{{#name}} {{name}}{{/name}},', { name: '' })).toBe('Hello,');
    expect(render('{{#a}}[{{#b}}{{b}}{{/b}}{{^b}}no b{{/b}}]{{/a}}{{^a}}none{{/a}}', { a: 'x', b: '' })).toBe('[no b]');
  });

  it('escapes every variable with the escape given, never the template around it', () => {
    expect(render('<p>{{name}}</p>', { name: `<img src=x onerror="alert('1')">&` }, escapeHtml)).toBe(
      '<p>&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;</p>',
    );
  });

  it('refuses an unknown variable, a section left open or closed wrong, raw output and an unclosed tag, with the line', () => {
    const problem = (source: string): string => {
      try {
        compileTemplate(source, ['name', 'link']);
      } catch (error) {
        expect(error).toBeInstanceOf(TemplateSyntaxError);
        return (error as Error).message;
      }
      throw new Error('expected a syntax error');
    };
    expect(problem('Hi\n{{nmae}}')).toBe('line 2: unknown variable "nmae"; this mail has name, link');
    expect(problem('{{#name}}\nx')).toBe('line 1: {{#name}} is never closed by {{/name}}');
    expect(problem('{{#name}}{{/link}}')).toBe('line 1: {{/link}} closes {{#name}} of line 1');
    expect(problem('{{/name}}')).toBe('line 1: {{/name}} closes no section');
    expect(problem('{{{name}}}')).toMatch(/^line 1: raw output/);
    expect(problem('a\n\n{{name')).toBe('line 3: "{{" is never closed by "}}"');
    expect(problem('{{name.first}}')).toMatch(/^line 1: "\{\{name.first\}\}" is not a tag/);
  });
});

describe('mail templates: shipped per MAIL_LOCALE, replaced from MAIL_TEMPLATES_DIR', () => {
  it('ships every mail in every locale', () => {
    for (const locale of mailLocales) {
      const templates = loadMailTemplates({ locale, directory: null });
      for (const kind of mailKinds) {
        const mail = templates.render(job({ kind }), 'https://auth.example.com/link?a=1&b=2', 'Acme');
        expect(mail.subject).toContain('Acme');
        expect(mail.text).toContain('https://auth.example.com/link?a=1&b=2');
        expect(mail.html).toContain('href="https://auth.example.com/link?a=1&amp;b=2"');
        expect(mail.html).toContain(`<html lang="${locale}">`);
      }
    }
  });

  it('speaks German with MAIL_LOCALE=de: words, lifetimes, dates and lists', () => {
    const templates = loadMailTemplates({ locale: 'de', directory: null });
    const reset = templates.render(job({ kind: 'password-reset' }), 'https://x/reset', 'Acme');
    expect(reset.subject).toBe('Ihr Acme-Passwort zurücksetzen');
    expect(reset.text.startsWith('Hallo Ada,\n')).toBe(true);
    expect(reset.text).toContain('Neues Passwort wählen: https://x/reset');
    expect(reset.text).toContain('Dieser Link ist 1 Stunde gültig (bis 1. Januar 2026 um 01:00 UTC).');
    const invitation = templates.render(
      job({
        kind: 'invitation',
        name: '',
        expiresAt: '2026-01-03T00:00:00.000Z',
        invitation: { organizationName: 'Engines', inviterName: 'Ada Lovelace', inviterEmail: 'ada@example.com', role: 'admin,member' },
      }),
      'https://app/join/1',
      'Acme',
    );
    expect(invitation.subject).toBe('Ada Lovelace hat Sie zu Engines auf Acme eingeladen');
    expect(invitation.text).toContain('Ada Lovelace (ada@example.com) hat Sie eingeladen, der Organisation Engines auf Acme beizutreten, mit den Rollen admin und member.');
    expect(invitation.text).toContain('Diese Einladung ist 48 Stunden gültig');
  });

  it('takes each file of the directory in place of its shipped template, and the shipped one for the rest', () => {
    const directory = templatesDirectory({
      [templateFileName('verification', 'subject')]: 'Welcome to {{productName}},\r\n{{name}}!\n',
      [templateFileName('verification', 'html')]: '<h1>{{subject}}</h1><p>Hi {{name}}</p><a href="{{link}}">go</a>\n',
      '..data': 'a mount of its own',
    });
    const templates = loadMailTemplates({ locale: 'en', directory });
    expect(templates.overridden).toEqual(['verification.subject.txt', 'verification.html']);
    const mail = templates.render(job({ name: 'Eve <script>alert(1)</script>\r\nBcc: x@example.com' }), 'https://x/v?a=1&b=2', 'Acme');
    expect(mail.subject).toBe('Welcome to Acme, Eve <script>alert(1)</script> Bcc: x@example.com!');
    expect(mail.html).toBe(
      '<h1>Welcome to Acme, Eve &lt;script&gt;alert(1)&lt;/script&gt; Bcc: x@example.com!</h1><p>Hi Eve &lt;script&gt;alert(1)&lt;/script&gt;\r\nBcc: x@example.com</p><a href="https://x/v?a=1&amp;b=2">go</a>\n',
    );
    // The text part is the shipped one.
    expect(mail.text).toContain('Verify email address: https://x/v?a=1&b=2');
    expect(templates.render(job({ kind: 'password-reset' }), 'https://x', 'Acme').subject).toBe('Reset your Acme password');
  });

  it('refuses a directory it cannot read, a file no mail reads, an unknown variable and a mail without its link', () => {
    expect(refusal(() => loadMailTemplates({ locale: 'en', directory: '/nonexistent/mail-templates' }))).toBe(
      'MAIL_TEMPLATES_DIR /nonexistent/mail-templates cannot be read (ENOENT)',
    );
    const typo = templatesDirectory({ 'verfication.subject.txt': 'x' });
    expect(refusal(() => loadMailTemplates({ locale: 'en', directory: typo }))).toMatch(
      new RegExp(`^MAIL_TEMPLATES_DIR ${typo} holds verfication.subject.txt, which no mail reads; its templates are named verification.subject.txt, `),
    );
    const unknown = templatesDirectory({ 'password-reset.text.txt': 'Reset:\n{{link}}\nfor {{newEmail}}\n' });
    expect(refusal(() => loadMailTemplates({ locale: 'de', directory: unknown }))).toBe(
      `mail template ${path.join(unknown, 'password-reset.text.txt')}, line 3: unknown variable "newEmail"; this mail has productName, to, name, link, expiresIn, expiresAt, subject`,
    );
    const linkless = templatesDirectory({ 'invitation.html': '<p>{{organizationName}}</p>' });
    expect(refusal(() => loadMailTemplates({ locale: 'en', directory: linkless }))).toBe(
      `mail template ${path.join(linkless, 'invitation.html')} never shows {{link}}: without it the mail is of no use`,
    );
  });

  it('refuses a template file it cannot read', () => {
    // Not by its mode (tests may run as root, who reads any file): a directory in a template's place.
    const directory = templatesDirectory({});
    mkdirSync(path.join(directory, 'verification.html'));
    expect(refusal(() => loadMailTemplates({ locale: 'en', directory }))).toBe(`mail template ${path.join(directory, 'verification.html')} cannot be read (EISDIR)`);
  });
});
