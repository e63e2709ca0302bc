import type { MailJob } from '@portcullis/contracts';

export interface RenderedMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

export interface TemplateSettings {
  readonly productName: string;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** "1 hour", "24 hours", "30 minutes": how long a link stays valid, in words. */
export function describeLifetime(seconds: number): string {
  const unit = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (seconds >= 3600 && seconds % 3600 === 0) return unit(seconds / 3600, 'hour');
  if (seconds >= 60 && seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return unit(Math.max(0, Math.round(seconds)), 'second');
}

interface Copy {
  readonly subject: string;
  readonly intro: string;
  readonly action: string;
  readonly outro: string;
  /** What expires, for the expiry line. */
  readonly expiring: 'link' | 'invitation';
}

/** Names chosen by users go into the subject: a line break there would end the header early. */
function oneLine(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

/** "the role admin", "the roles admin and member" (roles travel comma-separated). */
function describeRoles(roles: string): string {
  const names = roles.split(',').map((role) => role.trim()).filter((role) => role !== '');
  if (names.length === 0) return 'no role';
  if (names.length === 1) return `the role ${names[0]}`;
  return `the roles ${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function invitationCopy(job: MailJob, product: string): Copy {
  const details = job.invitation;
  const outro = `The invitation is for ${job.to}: accept it signed in with that address. If you did not expect it, you can ignore this mail.`;
  if (!details) {
    // The details are optional in the job contract: without them the mail still carries the link.
    return {
      subject: `You are invited to an organization on ${product}`,
      intro: `You have been invited to join an organization on ${product}.`,
      action: 'View the invitation',
      outro,
      expiring: 'invitation',
    };
  }
  const organization = oneLine(details.organizationName);
  const inviterName = oneLine(details.inviterName);
  const inviterEmail = oneLine(details.inviterEmail);
  const inviter = inviterName ? `${inviterName} (${inviterEmail})` : inviterEmail;
  return {
    subject: `${inviterName || inviterEmail} invited you to join ${organization} on ${product}`,
    intro: `${inviter} invited you to join the organization ${organization} on ${product}, with ${describeRoles(details.role)}.`,
    action: `Join ${organization}`,
    outro,
    expiring: 'invitation',
  };
}

function copyFor(job: MailJob, product: string): Copy {
  switch (job.kind) {
    case 'verification':
      return {
        subject: `Verify your email address for ${product}`,
        intro: `Please confirm that ${job.to} is your email address for your ${product} account.`,
        action: 'Verify email address',
        outro: `If you did not create a ${product} account, you can ignore this mail.`,
        expiring: 'link',
      };
    case 'password-reset':
      return {
        subject: `Reset your ${product} password`,
        intro: `Someone asked to reset the password of the ${product} account for ${job.to}.`,
        action: 'Choose a new password',
        outro: 'If it was not you, ignore this mail: your password stays as it is.',
        expiring: 'link',
      };
    case 'change-email':
      return {
        subject: `Confirm the change of your ${product} email address`,
        intro: `You asked to change the email address of your ${product} account from ${job.to} to ${job.newEmail ?? 'a new address'}.`,
        action: 'Confirm the change',
        outro: 'After you confirm, we send a verification link to the new address. If it was not you, ignore this mail.',
        expiring: 'link',
      };
    case 'delete-account':
      return {
        subject: `Confirm the deletion of your ${product} account`,
        intro: `You asked to delete your ${product} account (${job.to}). This cannot be undone.`,
        action: 'Delete my account',
        outro: 'If it was not you, ignore this mail and consider changing your password.',
        expiring: 'link',
      };
    case 'invitation':
      return invitationCopy(job, product);
    default: {
      const unreachable: never = job.kind;
      return unreachable;
    }
  }
}

/** Text and HTML with the product name, the link and when it expires; everything in the HTML escaped. */
export function renderMail(job: MailJob, link: string, settings: TemplateSettings): RenderedMail {
  const product = settings.productName;
  const copy = copyFor(job, product);
  const lifetime = describeLifetime((Date.parse(job.expiresAt) - Date.parse(job.requestedAt)) / 1000);
  const expiry = `This ${copy.expiring} expires in ${lifetime} (at ${new Date(job.expiresAt).toUTCString()}).`;
  const greeting = job.name ? `Hello ${job.name},` : 'Hello,';
  const text = [greeting, '', copy.intro, '', `${copy.action}: ${link}`, '', expiry, '', copy.outro, '', `— ${product}`, ''].join('\n');
  const e = escapeHtml;
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${e(copy.subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1f2933; max-width: 560px; margin: 0 auto; padding: 24px;">
  <p>${e(greeting)}</p>
  <p>${e(copy.intro)}</p>
  <p><a href="${e(link)}" style="display: inline-block; padding: 10px 18px; background: #1f2933; color: #fff; text-decoration: none; border-radius: 6px;">${e(copy.action)}</a></p>
  <p style="font-size: 13px;">Or open this link: <a href="${e(link)}">${e(link)}</a></p>
  <p style="font-size: 13px;">${e(expiry)}</p>
  <p style="font-size: 13px; color: #52606d;">${e(copy.outro)}</p>
  <p style="font-size: 13px; color: #52606d;">— ${e(product)}</p>
</body>
</html>
`;
  return { subject: copy.subject, text, html };
}
