import { z } from 'zod';
import { mailKinds } from '../mail/mail-job.ts';
import { endpoint } from './endpoint.ts';

// Mail for operators: the dev mailbox, the mailer's delivery log with its dead letters and their retry, and
// the queue's depth.

const mailboxQuerySchema = z.object({
  to: z.string().max(320).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

const mailboxMessageSchema = z.object({
  id: z.number().int(),
  jobId: z.string(),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  text: z.string(),
  html: z.string(),
  receivedAt: z.string(),
});
export type MailboxMessage = z.infer<typeof mailboxMessageSchema>;

export const mailDeliveryStatuses = ['pending', 'sent', 'dead'] as const;
export type MailDeliveryStatus = (typeof mailDeliveryStatuses)[number];

/** A comma-separated list of some of `values` (`dead,pending`), as the audit search takes its types. */
function listOf<const T extends readonly [string, ...string[]]>(values: T) {
  const one = z.enum(values);
  return z
    .string()
    .max(500)
    .transform((text, context) => {
      const chosen = text.split(',').map((v) => v.trim()).filter((v) => v !== '');
      const parsed = z.array(one).min(1).safeParse(chosen);
      if (parsed.success) return [...new Set(parsed.data)];
      context.addIssue({ code: 'custom', message: `must be a comma-separated list of ${values.join(', ')}` });
      return z.NEVER;
    });
}

const mailDeliveriesQuerySchema = z.object({
  status: listOf(mailDeliveryStatuses).optional().meta({ description: 'comma-separated statuses (`dead,pending`)' }),
  kind: listOf(mailKinds).optional().meta({ description: 'comma-separated kinds of mail (`verification,password-reset`)' }),
  to: z.string().max(320).optional().meta({ description: 'recipients containing this, case-insensitive' }),
  userId: z.string().max(255).optional(),
  jobId: z.uuid().optional().meta({ description: 'the one job (an id pasted from a log)' }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

const mailDeliverySchema = z
  .object({
    jobId: z.string(),
    kind: z.string(),
    userId: z.string().nullable(),
    to: z.string(),
    status: z.enum(mailDeliveryStatuses),
    attempts: z.number().int(),
    firstAttemptedAt: z
      .string()
      .nullable()
      .meta({ description: 'when its first delivery attempt began: the retry window (MAILER_RETRY_WINDOW_SECONDS) counts from it; null before any' }),
    nextAttemptAt: z.string().nullable(),
    lastError: z.string().nullable(),
    transport: z.string().nullable(),
    messageId: z.string().nullable(),
    smtpResponse: z.string().nullable(),
    receivedAt: z.string().nullable(),
    sentAt: z.string().nullable(),
    deadAt: z.string().nullable(),
  })
  .meta({ id: 'MailDelivery' });
export type MailDelivery = z.infer<typeof mailDeliverySchema>;

const mailQueueSchema = z.object({
  pending: z.number().int(),
  waitingForRelay: z
    .number()
    .int()
    .meta({ description: 'of the pending, those waiting out a backoff because the relay could not be used (an SMTP outage): the first mail through makes them due' }),
  dead: z.number().int(),
  sentLast24h: z.number().int(),
  oldestUnsentAt: z.string().nullable().meta({ description: 'when the oldest pending mail was received; null when none is' }),
  oldestUnsentAgeSeconds: z.number().nullable(),
});
export type MailQueue = z.infer<typeof mailQueueSchema>;

export const mailOpsEndpoints = {
  mailbox: endpoint({
    operationId: 'mailbox',
    method: 'GET',
    path: '/ops/mailbox',
    root: true,
    summary: 'Mail the embedded default delivered without SMTP, newest first',
    tag: 'Ops',
    auth: 'session-or-server',
    query: mailboxQuerySchema,
    answer: z.object({ messages: z.array(mailboxMessageSchema) }),
  }),
  mailDeliveries: endpoint({
    operationId: 'mailDeliveries',
    method: 'GET',
    path: '/ops/mail/deliveries',
    root: true,
    summary: 'The delivery log: pending, sent and dead-lettered mail jobs, filtered, latest change first, with the total',
    tag: 'Ops',
    auth: 'session-or-server',
    query: mailDeliveriesQuerySchema,
    answer: z.object({ deliveries: z.array(mailDeliverySchema), total: z.number().int() }),
  }),
  retryMailDelivery: endpoint({
    operationId: 'retryMailDelivery',
    method: 'POST',
    path: '/ops/mail/deliveries/:jobId/retry',
    root: true,
    summary: 'Send a dead-lettered mail again: the retry is appended to the log, and the mailer makes the job pending again',
    tag: 'Ops',
    auth: 'session-or-server',
    params: z.object({ jobId: z.uuid() }),
    answer: z.object({ jobId: z.string(), requestedAt: z.string() }),
  }),
  mailQueue: endpoint({
    operationId: 'mailQueue',
    method: 'GET',
    path: '/ops/mail/queue',
    root: true,
    summary: 'The mail queue: pending and dead jobs, mail sent in the last 24 hours, the age of the oldest unsent mail',
    tag: 'Ops',
    auth: 'session-or-server',
    answer: mailQueueSchema,
  }),
};
