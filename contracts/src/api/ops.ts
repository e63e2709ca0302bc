import { z } from 'zod';
import { endpoint } from './endpoint.ts';

// What operators and probes call: outside the better-auth API, but declared like it so clients and
// the OpenAPI document know them.

const readinessCheckSchema = z.object({ ok: z.boolean(), detail: z.string().optional() });

const readinessAnswerSchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  checks: z.record(z.string(), readinessCheckSchema).meta({ description: 'postgres, projections (with their lag), redis' }),
});

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

const mailDeliveryStatuses = ['pending', 'sent', 'dead'] as const;

const mailDeliveriesQuerySchema = z.object({
  status: z.enum(mailDeliveryStatuses).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const mailDeliverySchema = z.object({
  jobId: z.string(),
  kind: z.string(),
  userId: z.string().nullable(),
  to: z.string(),
  status: z.enum(mailDeliveryStatuses),
  attempts: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  lastError: z.string().nullable(),
  transport: z.string().nullable(),
  messageId: z.string().nullable(),
  smtpResponse: z.string().nullable(),
  receivedAt: z.string().nullable(),
  sentAt: z.string().nullable(),
  deadAt: z.string().nullable(),
});
export type MailDelivery = z.infer<typeof mailDeliverySchema>;

const errorPageQuerySchema = z.object({
  error: z.string().max(2048).optional(),
  error_description: z.string().max(2048).optional(),
});

export const opsEndpoints = {
  ok: endpoint({
    operationId: 'ok',
    method: 'GET',
    path: '/ok',
    summary: 'Answers while the auth API is up (better-auth\'s liveness route)',
    tag: 'Ops',
    auth: 'public',
    answer: z.object({ ok: z.boolean() }),
  }),
  errorPage: endpoint({
    operationId: 'error',
    method: 'GET',
    path: '/error',
    summary: 'The page browsers land on when a link or callback fails (`?error=CODE`)',
    tag: 'Ops',
    auth: 'public',
    query: errorPageQuerySchema,
    html: true,
  }),
  healthz: endpoint({
    operationId: 'healthz',
    method: 'GET',
    path: '/healthz',
    root: true,
    summary: 'Liveness: the process answers',
    tag: 'Ops',
    auth: 'public',
    answer: z.object({ status: z.literal('ok') }),
  }),
  readyz: endpoint({
    operationId: 'readyz',
    method: 'GET',
    path: '/readyz',
    root: true,
    summary: 'Readiness: Postgres and Redis answer and the read models follow the log (503 otherwise)',
    tag: 'Ops',
    auth: 'public',
    answer: readinessAnswerSchema,
    otherAnswers: { 503: readinessAnswerSchema },
  }),
  mailbox: endpoint({
    operationId: 'mailbox',
    method: 'GET',
    path: '/ops/mailbox',
    root: true,
    summary: 'Mail the embedded default delivered without SMTP, newest first',
    tag: 'Ops',
    auth: 'server',
    query: mailboxQuerySchema,
    answer: z.object({ messages: z.array(mailboxMessageSchema) }),
  }),
  mailDeliveries: endpoint({
    operationId: 'mailDeliveries',
    method: 'GET',
    path: '/ops/mail/deliveries',
    root: true,
    summary: 'The delivery log: pending, sent and dead-lettered mail jobs',
    tag: 'Ops',
    auth: 'server',
    query: mailDeliveriesQuerySchema,
    answer: z.object({ deliveries: z.array(mailDeliverySchema) }),
  }),
  startPage: endpoint({
    operationId: 'startPage',
    method: 'GET',
    path: '/',
    root: true,
    summary: 'What runs and where: the page a newcomer opens first',
    tag: 'Ops',
    auth: 'public',
    html: true,
  }),
  readme: endpoint({
    operationId: 'readme',
    method: 'GET',
    path: '/readme',
    root: true,
    summary: 'The README, as text',
    tag: 'Ops',
    auth: 'public',
  }),
};
