import type { MailKind } from '@portcullis/contracts';

/** A shipped mail's three templates, as the files of MAIL_TEMPLATES_DIR hold them. */
export interface MailTemplateSources {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** A shipped language: its templates, and the words and dates the variables are made of in it. */
export interface ShippedLocale {
  readonly templates: Readonly<Record<MailKind, MailTemplateSources>>;
  /** "1 hour", "24 Stunden": a link's lifetime, the `expiresIn` variable. */
  describeLifetime(seconds: number): string;
  /** The `expiresAt` variable. */
  formatInstant(at: Date): string;
  /** Joins the last two of a list: "admin, member and owner". */
  readonly and: string;
}

/** One mail's lines, template sources themselves; the shipped mails of a language share their frame. */
export interface MailCopy {
  readonly subject: string;
  readonly intro: string;
  readonly action: string;
  readonly expiry: string;
  readonly outro: string;
}

/** The frame every shipped mail of a language has around its own lines. */
export interface MailFrame {
  /** The `lang` of the HTML. */
  readonly language: string;
  readonly greeting: string;
  readonly orOpenThisLink: string;
  readonly signature: string;
}

/** The three templates of a mail from its lines in its language's frame. */
export function framedMail(frame: MailFrame, copy: MailCopy): MailTemplateSources {
  const text = [frame.greeting, '', copy.intro, '', `${copy.action}: {{link}}`, '', copy.expiry, '', copy.outro, '', frame.signature, ''].join('\n');
  const html = `<!doctype html>
<html lang="${frame.language}">
<head><meta charset="utf-8"><title>{{subject}}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1f2933; max-width: 560px; margin: 0 auto; padding: 24px;">
  <p>${frame.greeting}</p>
  <p>${copy.intro}</p>
  <p><a href="{{link}}" style="display: inline-block; padding: 10px 18px; background: #1f2933; color: #fff; text-decoration: none; border-radius: 6px;">${copy.action}</a></p>
  <p style="font-size: 13px;">${frame.orOpenThisLink} <a href="{{link}}">{{link}}</a></p>
  <p style="font-size: 13px;">${copy.expiry}</p>
  <p style="font-size: 13px; color: #52606d;">${copy.outro}</p>
  <p style="font-size: 13px; color: #52606d;">${frame.signature}</p>
</body>
</html>
`;
  return { subject: `${copy.subject}\n`, text, html };
}

/** "1 hour", "30 minutes": the largest whole unit, in a language's singular and plural. */
export function lifetimeIn(units: { readonly hour: readonly [string, string]; readonly minute: readonly [string, string]; readonly second: readonly [string, string] }) {
  return (seconds: number): string => {
    const unit = (n: number, [one, many]: readonly [string, string]): string => `${n} ${n === 1 ? one : many}`;
    if (seconds >= 3600 && seconds % 3600 === 0) return unit(seconds / 3600, units.hour);
    if (seconds >= 60 && seconds % 60 === 0) return unit(seconds / 60, units.minute);
    return unit(Math.max(0, Math.round(seconds)), units.second);
  };
}
