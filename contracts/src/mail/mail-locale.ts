/**
 * The languages the mailer ships its mails in (MAIL_LOCALE); the configuration refuses any other, and the
 * mailer has the templates of each.
 */
export const mailLocales = ['en', 'de'] as const;
export type MailLocale = (typeof mailLocales)[number];
