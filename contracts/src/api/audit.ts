import { z } from 'zod';
import { actorKinds, eventActorSchema, eventMetadataSchema } from '../events/define-event.ts';
import { endpoint } from './endpoint.ts';
import { instantSchema as instant, ipOrCidrSchema as ipOrCidr } from './query-filters.ts';

// The audit trail for operators and security teams: search, export and time travel over the event log.

export const auditFilterSchema = z.object({
  user: z.string().max(255).optional().meta({ description: 'events concerning this user id (named in the data, or its actor)' }),
  organization: z.string().max(255).optional().meta({ description: 'events of this organization id' }),
  actor: z.string().max(255).optional().meta({ description: 'events this user id did: as the acting user, or as the admin behind an impersonation' }),
  actorKind: z.enum(actorKinds).optional(),
  ip: ipOrCidr.optional().meta({ description: 'client address, or a CIDR range it falls in' }),
  type: z.string().max(200).optional().meta({ description: 'comma-separated event types (`session.created.v2,session.revoked.v2`)' }),
  typePrefix: z.string().max(200).optional().meta({ description: 'event types starting with this (`credentials.`)' }),
  stream: z.string().max(300).optional(),
  from: instant.optional().meta({ description: 'recorded in the log at or after this instant' }),
  to: instant.optional().meta({ description: 'recorded in the log before this instant' }),
  order: z.enum(['newest', 'oldest']).default('newest'),
  cursor: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().meta({ description: 'log position to continue after (the previous page\'s nextCursor)' }),
});
export type AuditFilter = z.infer<typeof auditFilterSchema>;

const auditSearchQuerySchema = auditFilterSchema.extend({
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

const auditEventSchema = z
  .object({
    position: z.number().int(),
    eventId: z.string(),
    streamId: z.string(),
    streamVersion: z.number().int(),
    type: z.string(),
    occurredAt: z.string(),
    recordedAt: z.string(),
    actor: eventActorSchema,
    data: z.record(z.string(), z.unknown()).meta({ description: 'the event data; password hashes and sealed tokens shown as "[redacted]"' }),
    metadata: eventMetadataSchema,
    hash: z.string().meta({ description: 'the event\'s link in the log\'s hash chain (hex)' }),
    sentence: z.string().meta({ description: 'what happened, in words' }),
  })
  .meta({ id: 'AuditEvent' });
export type AuditEvent = z.infer<typeof auditEventSchema>;

const auditSearchAnswerSchema = z.object({
  events: z.array(auditEventSchema),
  nextCursor: z.number().int().nullable().meta({ description: 'pass as `cursor` for the next page; null at the end' }),
  indexedTo: z.number().int().meta({ description: 'the log position the audit index has reached' }),
});

const atSchema = z
  .string()
  .max(64)
  .refine((value) => /^\d{1,15}$/.test(value) || z.iso.datetime({ offset: true }).safeParse(value).success, 'must be an ISO instant or a log position')
  .meta({ description: 'an ISO instant, or a log position' });

const auditAtQuerySchema = z.object({
  at: atSchema.optional().meta({ description: 'the state then (default: now)' }),
  diffFrom: atSchema.optional().meta({ description: 'also answer what changed between this point and `at`' }),
});

const auditChangeSchema = z.object({ path: z.string(), before: z.unknown(), after: z.unknown() });

const auditStateAnswerSchema = z.object({
  id: z.string(),
  position: z.number().int().meta({ description: 'the last log position folded' }),
  state: z.unknown(),
  diff: z
    .object({ fromPosition: z.number().int(), changes: z.array(auditChangeSchema) })
    .nullable(),
});

const logHeadSchema = z.object({
  logId: z.string(),
  position: z.number().int(),
  hash: z.string(),
  exportedAt: z.string(),
  signature: z.object({ algorithm: z.literal('Ed25519'), publicKey: z.string(), value: z.string() }).nullable(),
});

export const auditEndpoints = {
  auditEvents: endpoint({
    operationId: 'auditEvents',
    method: 'GET',
    path: '/ops/audit/events',
    root: true,
    summary: 'Search the audit trail: every event, filtered, with its metadata and a sentence, paged by log position',
    tag: 'Audit',
    auth: 'session-or-server',
    query: auditSearchQuerySchema,
    answer: auditSearchAnswerSchema,
  }),
  auditExport: endpoint({
    operationId: 'auditExport',
    method: 'GET',
    path: '/ops/audit/export',
    root: true,
    summary: 'The audit trail as NDJSON (one AuditEvent a line), with the search filters, streamed in constant memory',
    tag: 'Audit',
    auth: 'session-or-server',
    query: auditFilterSchema,
  }),
  auditHead: endpoint({
    operationId: 'auditHead',
    method: 'GET',
    path: '/ops/audit/head',
    root: true,
    summary: 'The log head (position and chain hash), signed with AUDIT_SIGNING_KEY when configured',
    tag: 'Audit',
    auth: 'session-or-server',
    answer: logHeadSchema,
  }),
  auditUserAt: endpoint({
    operationId: 'auditUserAt',
    method: 'GET',
    path: '/ops/audit/users/:id',
    root: true,
    summary: 'A user as it was at an instant or log position, folded from the log by the deciders\' own models',
    tag: 'Audit',
    auth: 'session-or-server',
    params: z.object({ id: z.string().max(255) }),
    query: auditAtQuerySchema,
    answer: auditStateAnswerSchema,
  }),
  auditOrganizationAt: endpoint({
    operationId: 'auditOrganizationAt',
    method: 'GET',
    path: '/ops/audit/organizations/:id',
    root: true,
    summary: 'An organization as it was at an instant or log position, folded from the log by the deciders\' own model',
    tag: 'Audit',
    auth: 'session-or-server',
    params: z.object({ id: z.string().max(255) }),
    query: auditAtQuerySchema,
    answer: auditStateAnswerSchema,
  }),
};
