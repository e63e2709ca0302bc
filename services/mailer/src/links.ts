import type { MailJob } from '@portcullis/contracts';

export interface LinkSettings {
  /** BASE_URL + the auth base path. */
  readonly authBase: string;
  /** Where an invitation is answered (AUTH_ORGANIZATION_INVITATION_URL); `{id}` stands for the invitation id. */
  readonly invitationUrl: string;
}

/**
 * The link in each mail, built as better-auth builds it: `authBase` is BASE_URL plus the auth base path,
 * the caller's callbackURL travels URL-encoded (defaulting to '/', or to nothing for a reset). An
 * invitation's token is the invitation id, put into the deployment's invitation URL.
 */
export function mailLink(job: MailJob, token: string, settings: LinkSettings): string {
  const { authBase } = settings;
  switch (job.kind) {
    case 'verification':
    case 'change-email':
      return `${authBase}/verify-email?token=${token}&callbackURL=${encodeURIComponent(job.callbackURL || '/')}`;
    case 'password-reset':
      return `${authBase}/reset-password/${token}?callbackURL=${job.callbackURL ? encodeURIComponent(job.callbackURL) : ''}`;
    case 'delete-account':
      return `${authBase}/delete-user/callback?token=${token}&callbackURL=${encodeURIComponent(job.callbackURL || '/')}`;
    case 'invitation': {
      const id = encodeURIComponent(token);
      // A replacer function, so nothing in the id is read as a `$&`-style replacement pattern.
      return settings.invitationUrl.replaceAll('{id}', () => id);
    }
    default: {
      const unreachable: never = job.kind;
      return unreachable;
    }
  }
}
