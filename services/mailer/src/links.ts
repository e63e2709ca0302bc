import type { MailJob } from '@portcullis/contracts';

/**
 * The link in each mail, built as better-auth builds it: `authBase` is BASE_URL plus the auth base path,
 * the caller's callbackURL travels URL-encoded (defaulting to '/', or to nothing for a reset).
 */
export function mailLink(job: MailJob, token: string, authBase: string): string {
  switch (job.kind) {
    case 'verification':
    case 'change-email':
      return `${authBase}/verify-email?token=${token}&callbackURL=${encodeURIComponent(job.callbackURL || '/')}`;
    case 'password-reset':
      return `${authBase}/reset-password/${token}?callbackURL=${job.callbackURL ? encodeURIComponent(job.callbackURL) : ''}`;
    case 'delete-account':
      return `${authBase}/delete-user/callback?token=${token}&callbackURL=${encodeURIComponent(job.callbackURL || '/')}`;
    default: {
      const unreachable: never = job.kind;
      return unreachable;
    }
  }
}
