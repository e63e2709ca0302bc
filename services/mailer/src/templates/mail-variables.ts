import type { MailJob, MailKind } from '@portcullis/contracts';
import type { ShippedLocale } from './locales/layout.ts';

/** Every mail's variables (docs/mail.md has their meaning). */
const commonVariables = ['productName', 'to', 'name', 'link', 'expiresIn', 'expiresAt'] as const;
const invitationVariables = ['organizationName', 'inviterName', 'inviterEmail', 'inviter', 'inviterWithEmail', 'roles', 'role', 'severalRoles'] as const;

/** The variables of each kind of mail; the text and HTML templates have `subject` besides. */
export const mailVariables: Readonly<Record<MailKind, readonly string[]>> = {
  verification: commonVariables,
  'password-reset': commonVariables,
  'change-email': [...commonVariables, 'newEmail'],
  'delete-account': commonVariables,
  invitation: [...commonVariables, ...invitationVariables],
};

/** Names chosen by users: a line break in a subject would end the header early, and means nothing in a line of text. */
function oneLine(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

function listIn(locale: ShippedLocale, names: readonly string[]): string {
  return names.length < 2 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} ${locale.and} ${names.at(-1)}`;
}

function invitationValues(job: MailJob, locale: ShippedLocale): Record<(typeof invitationVariables)[number], string> {
  const details = job.invitation;
  if (!details) {
    // Optional in the job contract: without them the mail still carries its link.
    return { organizationName: '', inviterName: '', inviterEmail: '', inviter: '', inviterWithEmail: '', roles: '', role: '', severalRoles: '' };
  }
  const inviterName = oneLine(details.inviterName);
  const inviterEmail = oneLine(details.inviterEmail);
  // Roles travel comma-separated.
  const roles = details.role
    .split(',')
    .map((role) => oneLine(role))
    .filter((role) => role !== '');
  return {
    organizationName: oneLine(details.organizationName),
    inviterName,
    inviterEmail,
    inviter: inviterName || inviterEmail,
    inviterWithEmail: inviterName ? `${inviterName} (${inviterEmail})` : inviterEmail,
    roles: listIn(locale, roles),
    role: roles.length === 1 ? roles[0]! : '',
    severalRoles: roles.length > 1 ? listIn(locale, roles) : '',
  };
}

/** A job's variables, in the words of the deployment's language (the lifetime, the expiry date, lists). */
export function variablesOf(job: MailJob, link: string, productName: string, locale: ShippedLocale): Record<string, string> {
  const lifetimeSeconds = (Date.parse(job.expiresAt) - Date.parse(job.requestedAt)) / 1000;
  const common: Record<(typeof commonVariables)[number], string> = {
    productName,
    to: job.to,
    name: job.name,
    link,
    expiresIn: locale.describeLifetime(lifetimeSeconds),
    expiresAt: locale.formatInstant(new Date(job.expiresAt)),
  };
  switch (job.kind) {
    case 'verification':
    case 'password-reset':
    case 'delete-account':
      return common;
    case 'change-email':
      return { ...common, newEmail: job.newEmail ?? '' };
    case 'invitation':
      return { ...common, ...invitationValues(job, locale) };
    default: {
      const unreachable: never = job.kind;
      return unreachable;
    }
  }
}
