import { z } from 'zod';

export const mailKinds = ['verification', 'password-reset', 'change-email', 'delete-account', 'invitation'] as const;
export type MailKind = (typeof mailKinds)[number];

/** The Kafka topic of each kind of mail job (DESIGN.md); messages are keyed by user id. */
export const mailTopics = {
  verification: 'auth.mail.verification',
  'password-reset': 'auth.mail.password-reset',
  'change-email': 'auth.mail.change-email',
  'delete-account': 'auth.mail.delete-account',
  invitation: 'auth.mail.invitation',
} as const satisfies Record<MailKind, string>;

/**
 * What an invitation mail says besides its link (for `invitation` jobs: `sealedToken` seals the invitation
 * id, `userId` is the inviter's). Added to version 1 as an optional field: older mailers ignore it.
 */
export const invitationMailDetailsSchema = z.object({
  organizationName: z.string(),
  inviterName: z.string(),
  inviterEmail: z.string(),
  role: z.string(),
});
export type InvitationMailDetails = z.infer<typeof invitationMailDetailsSchema>;

/**
 * A mail job as the mailer works on it, whichever transport brought it. `sealedToken` opens only with the
 * deployment's AUTH_SECRET; `callbackURL` is the caller's, as given (the mailer builds the link).
 */
export const mailJobSchema = z.object({
  jobId: z.uuid(),
  kind: z.enum(mailKinds),
  userId: z.string(),
  to: z.string(),
  name: z.string(),
  sealedToken: z.string(),
  callbackURL: z.string().nullable(),
  expiresAt: z.string(),
  /** For `change-email`: the address the user asked to move to. */
  newEmail: z.string().nullable(),
  invitation: invitationMailDetailsSchema.nullable().optional(),
  requestedAt: z.string(),
  traceparent: z.string().nullable(),
});
export type MailJob = z.infer<typeof mailJobSchema>;

/**
 * The bus message, version 1: its own contract, not the domain event. A published version never changes
 * shape; a v2 gets a new `schema` value and `parseMailJobMessage` learns to read both.
 */
const MAIL_JOB_MESSAGE_V1 = 'portcullis.mail-job.v1';
const mailJobMessageV1Schema = mailJobSchema.extend({ schema: z.literal(MAIL_JOB_MESSAGE_V1) });
export type MailJobMessageV1 = z.infer<typeof mailJobMessageV1Schema>;

export function toMailJobMessage(job: MailJob): MailJobMessageV1 {
  return { schema: MAIL_JOB_MESSAGE_V1, ...job };
}

/** Reads a message of any known version into the current job shape; throws on anything else. */
export function parseMailJobMessage(value: unknown): MailJob {
  const { schema: _schema, ...job } = mailJobMessageV1Schema.parse(value);
  return job;
}
