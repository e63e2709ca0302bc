import { z } from 'zod';
import { invitationMailDetailsSchema, mailKinds } from '../mail/mail-job.ts';
import { defineEvent } from './define-event.ts';

/**
 * Stream `mail-<jobId>`: a mail for the mailer, appended in the same atomic write as the fact it announces.
 * The raw token the link needs is sealed (AES-256-GCM with a key derived from AUTH_SECRET, the job id as
 * associated data): the log and its audit readers never see it in the clear.
 */
export const MailJobQueued = defineEvent(
  'mail.job_queued.v1',
  z.object({
    jobId: z.uuid(),
    kind: z.enum(mailKinds),
    userId: z.string(),
    to: z.string(),
    name: z.string(),
    sealedToken: z.string(),
    callbackURL: z.string().nullable(),
    expiresAt: z.string(),
    newEmail: z.string().nullable(),
    // Added (optional, so earlier events still parse) for invitation mail: who invites to what.
    invitation: invitationMailDetailsSchema.nullable().optional(),
  }),
);

/**
 * Stream `mail-<jobId>`: an operator asked for a dead-lettered mail to be sent again. The mailer, which owns
 * the delivery log, makes the job pending again if it died before this was asked (a retry asked for twice,
 * or replayed, sends nothing more).
 */
export const MailRetryRequested = defineEvent(
  'mail.retry_requested.v1',
  z.object({
    jobId: z.uuid(),
    kind: z.enum(mailKinds),
    userId: z.string().meta({ description: 'the user the mail is for' }),
  }),
);
