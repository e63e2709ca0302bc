import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { mailKinds, type MailJob, type MailKind, type MailLocale } from '@portcullis/contracts';
import { german } from './locales/de.ts';
import { english } from './locales/en.ts';
import type { MailTemplateSources, ShippedLocale } from './locales/layout.ts';
import { mailVariables, variablesOf } from './mail-variables.ts';
import { compileTemplate, escapeHtml, renderTemplate, TemplateSyntaxError, type CompiledTemplate } from './template-language.ts';

export interface RenderedMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

export interface MailTemplateOptions {
  readonly locale: MailLocale;
  /** MAIL_TEMPLATES_DIR: the files there replace the shipped templates of the same name. */
  readonly directory: string | null;
}

export interface MailTemplates {
  render(job: MailJob, link: string, productName: string): RenderedMail;
  /** The files of the directory that replace shipped templates, to say so in the start's log line. */
  readonly overridden: readonly string[];
}

/** A template the mailer cannot use: it refuses to start with this message rather than fail each send. */
export class MailTemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MailTemplateError';
  }
}

export const shippedLocales: Readonly<Record<MailLocale, ShippedLocale>> = { en: english, de: german };

type Part = keyof MailTemplateSources;
const parts: readonly Part[] = ['subject', 'text', 'html'];

/** The file of MAIL_TEMPLATES_DIR that holds a mail's part: `invitation.subject.txt`, `invitation.text.txt`, `invitation.html`. */
export function templateFileName(kind: MailKind, part: Part): string {
  return part === 'html' ? `${kind}.html` : `${kind}.${part}.txt`;
}

function directoryEntries(directory: string): Set<string> {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new MailTemplateError(`MAIL_TEMPLATES_DIR ${directory} cannot be read (${code})`);
  }
  const expected = new Set(mailKinds.flatMap((kind) => parts.map((part) => templateFileName(kind, part))));
  // Dot files are a mount's own (a Kubernetes ConfigMap's `..data`), not templates.
  const strays = names.filter((name) => !name.startsWith('.') && !expected.has(name));
  if (strays.length > 0) {
    throw new MailTemplateError(
      `MAIL_TEMPLATES_DIR ${directory} holds ${strays.join(', ')}, which no mail reads; its templates are named ${[...expected].join(', ')}`,
    );
  }
  return new Set(names.filter((name) => expected.has(name)));
}

function compile(source: string, known: readonly string[], where: string): CompiledTemplate {
  try {
    return compileTemplate(source, known);
  } catch (error) {
    if (error instanceof TemplateSyntaxError) throw new MailTemplateError(`mail template ${where}, ${error.message}`);
    throw error;
  }
}

function usesVariable(template: CompiledTemplate, name: string): boolean {
  const search = (nodes: CompiledTemplate['nodes']): boolean =>
    nodes.some((node) => (node.kind === 'variable' && node.name === name) || (node.kind === 'section' && search(node.body)));
  return search(template.nodes);
}

/**
 * The templates the mailer sends with: the shipped ones of MAIL_LOCALE, each replaced by its file in
 * MAIL_TEMPLATES_DIR where there is one. Everything is read and checked here, once, at start: an unreadable
 * directory, a file no mail reads, a template naming a variable its mail lacks, or a text or HTML template
 * without the mail's link throws a MailTemplateError.
 */
export function loadMailTemplates(options: MailTemplateOptions): MailTemplates {
  const locale = shippedLocales[options.locale];
  const present = options.directory === null ? new Set<string>() : directoryEntries(options.directory);
  const overridden: string[] = [];
  const compiled = {} as Record<MailKind, Record<Part, CompiledTemplate>>;
  for (const kind of mailKinds) {
    const byPart = {} as Record<Part, CompiledTemplate>;
    for (const part of parts) {
      const known = part === 'subject' ? mailVariables[kind] : [...mailVariables[kind], 'subject'];
      const file = templateFileName(kind, part);
      if (options.directory !== null && present.has(file)) {
        const filePath = path.join(options.directory, file);
        let source: string;
        try {
          source = readFileSync(filePath, 'utf8');
        } catch (error) {
          throw new MailTemplateError(`mail template ${filePath} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
        }
        byPart[part] = compile(source, known, filePath);
        if (part !== 'subject' && !usesVariable(byPart[part], 'link')) {
          throw new MailTemplateError(`mail template ${filePath} never shows {{link}}: without it the mail is of no use`);
        }
        overridden.push(file);
      } else {
        byPart[part] = compile(locale.templates[kind][part], known, `${file} shipped for ${options.locale}`);
      }
    }
    compiled[kind] = byPart;
  }
  const asIs = (value: string): string => value;
  return {
    overridden,
    render(job, link, productName) {
      const templates = compiled[job.kind];
      const values = variablesOf(job, link, productName, locale);
      // Whatever a template or a value holds, the subject stays one header line.
      const subject = renderTemplate(templates.subject, values, asIs).replace(/\s+/g, ' ').trim();
      const withSubject = { ...values, subject };
      return { subject, text: renderTemplate(templates.text, withSubject, asIs), html: renderTemplate(templates.html, withSubject, escapeHtml) };
    },
  };
}
