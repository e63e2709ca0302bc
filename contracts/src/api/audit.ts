import { z } from 'zod';
import { actorKinds, eventActorSchema, eventMetadataSchema } from '../events/define-event.ts';
import { endpoint } from './endpoint.ts';
import { idListSchema, instantSchema as instant, ipOrCidrSchema } from './query-filters.ts';

// The audit trail for operators and security teams: search, export and time travel over the event log.

/** Re-exported under the name the ops endpoints first imported it by. */
export const ipOrCidr = ipOrCidrSchema;

/** At most this many values of one filter: each is a read of its own index, merged. */
const MAX_VALUES = 20;

/** Several values of one filter: comma-separated (`a,b`), repeated (`x=a&x=b`), or both; a single value as before. */
function listOf<T extends z.ZodType<unknown, string>>(item: T) {
  return idListSchema(MAX_VALUES).pipe(z.array(z.string().pipe(item)).max(MAX_VALUES));
}

export const auditFilterSchema = z.object({
  user: listOf(z.string().max(255)).optional().meta({ description: 'events concerning any of these user ids (named in the data, or its actor); comma-separated' }),
  organization: listOf(z.string().max(255)).optional().meta({ description: 'events of any of these organization ids; comma-separated' }),
  actor: listOf(z.string().max(255)).optional().meta({ description: 'events any of these user ids did: as the acting user, or as the admin behind an impersonation; comma-separated' }),
  actorKind: listOf(z.enum(actorKinds)).optional().meta({ description: 'any of these actor kinds; comma-separated' }),
  ip: listOf(ipOrCidrSchema).optional().meta({ description: 'client address, or a CIDR range it falls in; several comma-separated' }),
  type: z.string().max(200).optional().meta({ description: 'comma-separated event types (`session.created.v2,session.revoked.v2`)' }),
  typePrefix: z.string().max(200).optional().meta({ description: 'event types starting with this (`credentials.`)' }),
  stream: listOf(z.string().max(300)).optional().meta({ description: 'any of these stream ids; comma-separated' }),
  from: instant.optional().meta({ description: 'recorded in the log at or after this instant' }),
  to: instant.optional().meta({ description: 'recorded in the log before this instant' }),
  order: z.enum(['newest', 'oldest']).default('newest'),
  cursor: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().meta({ description: 'log position to continue after (the previous page\'s nextCursor)' }),
});

type ListFilter = 'user' | 'organization' | 'actor' | 'actorKind' | 'ip' | 'stream';
type ParsedFilter = z.infer<typeof auditFilterSchema>;
/**
 * A filter as the search takes it: each list filter as parsed (a list), or one value alone, as callers
 * that build a filter in code (the CLI, the bench) always could.
 */
export type AuditFilter = Omit<ParsedFilter, ListFilter> & {
  readonly [K in ListFilter]?: NonNullable<ParsedFilter[K]> | NonNullable<ParsedFilter[K]>[number] | undefined;
};

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
    hash: z.string().nullable().meta({ description: 'the event\'s link in the log\'s hash chain (hex); null while the chainer has not reached it (a KurrentDB log, seconds behind)' }),
    sentence: z.string().meta({ description: 'what happened, in words' }),
  })
  .meta({ id: 'AuditEvent' });
export type AuditEvent = z.infer<typeof auditEventSchema>;

/**
 * A user as named now: their name and email, or `erased` once their deletion destroyed their personal data.
 * An id the log names that never was a user's (or is not projected yet) is absent from the map.
 */
export const auditPersonSchema = z
  .union([z.object({ name: z.string(), email: z.string() }), z.literal('erased')])
  .meta({ id: 'AuditPerson' });
export type AuditPerson = z.infer<typeof auditPersonSchema>;

/** An organization as named now, or as last named before its deletion (`deleted`). */
export const auditOrganizationLabelSchema = z
  .object({ name: z.string(), slug: z.string(), deleted: z.boolean() })
  .meta({ id: 'AuditOrganizationLabel' });
export type AuditOrganizationLabel = z.infer<typeof auditOrganizationLabelSchema>;

/** The names of the users and organizations an answer mentions by id, keyed by id. */
const namesSchema = {
  people: z.record(z.string(), auditPersonSchema).meta({ description: 'user id → name and email (or "erased"), for every actor and subject id in the answer' }),
  organizations: z.record(z.string(), auditOrganizationLabelSchema).meta({ description: 'organization id → name and slug, for every organization id in the answer' }),
};
export type AuditNames = { people: Record<string, AuditPerson>; organizations: Record<string, AuditOrganizationLabel> };

const auditSearchAnswerSchema = z.object({
  events: z.array(auditEventSchema),
  nextCursor: z.number().int().nullable().meta({ description: 'pass as `cursor` for the next page; null at the end' }),
  indexedTo: z.number().int().meta({ description: 'the log position the audit index has reached' }),
  ...namesSchema,
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

export const auditChangeSchema = z.object({ path: z.string(), before: z.unknown(), after: z.unknown() }).meta({ id: 'AuditChange' });
export type AuditChange = z.infer<typeof auditChangeSchema>;

const auditStateAnswerSchema = z.object({
  id: z.string(),
  position: z.number().int().meta({ description: 'the last log position folded' }),
  state: z.unknown(),
  diff: z
    .object({ fromPosition: z.number().int(), changes: z.array(auditChangeSchema) })
    .nullable(),
  ...namesSchema,
});

const auditHistoryQuerySchema = z.object({
  order: z.enum(['newest', 'oldest']).default('oldest'),
  cursor: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().meta({ description: 'log position to continue after (the previous page\'s nextCursor)' }),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
});

/** A point of the log where a subject's folded state changed: a mark on the time-travel slider (`at=position`). */
const auditHistoryPointSchema = z.object({
  position: z.number().int(),
  occurredAt: z.string(),
  recordedAt: z.string(),
  type: z.string(),
  streamId: z.string(),
});

const auditHistoryAnswerSchema = z.object({
  id: z.string(),
  points: z.array(auditHistoryPointSchema),
  total: z.number().int().meta({ description: 'every point of this subject\'s history, over all pages' }),
  nextCursor: z.number().int().nullable(),
});

const auditSubjectChangeSchema = z.object({
  kind: z.enum(['user', 'organization']),
  id: z.string(),
  before: z.unknown().meta({ description: 'the subject folded up to the event before this one (as time travel folds it)' }),
  after: z.unknown().meta({ description: 'the subject folded up to and with this event' }),
  changes: z.array(auditChangeSchema),
});

const auditEventDetailSchema = z.object({
  event: auditEventSchema,
  chain: z.object({
    previousPosition: z.number().int().meta({ description: '0 for the first event' }),
    previousHash: z.string().nullable().meta({ description: 'the chain hash before this event (hex; 64 zeros before the first; null: the previous event is missing)' }),
    hash: z.string().nullable().meta({ description: 'null while the chainer has not reached the event (a KurrentDB log)' }),
    verifies: z.boolean().meta({ description: 'whether this event\'s hash is the chain\'s over the previous hash and its stored bytes (false while it has none)' }),
  }),
  subjects: z.array(auditSubjectChangeSchema).meta({ description: 'each user and organization the event concerns, before and after it' }),
  ...namesSchema,
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
  auditEvent: endpoint({
    operationId: 'auditEvent',
    method: 'GET',
    path: '/ops/audit/events/:position',
    root: true,
    summary: 'One event of the log: as the search shows it, its link in the hash chain (verified), and the state of each user and organization it concerns just before and just after it',
    tag: 'Audit',
    auth: 'session-or-server',
    params: z.object({ position: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }),
    answer: auditEventDetailSchema,
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
  auditUserHistory: endpoint({
    operationId: 'auditUserHistory',
    method: 'GET',
    path: '/ops/audit/users/:id/history',
    root: true,
    summary: 'The log positions at which a user\'s time-travel state changed (with instant and event type), paged: the marks of a slider',
    tag: 'Audit',
    auth: 'session-or-server',
    params: z.object({ id: z.string().max(255) }),
    query: auditHistoryQuerySchema,
    answer: auditHistoryAnswerSchema,
  }),
  auditOrganizationHistory: endpoint({
    operationId: 'auditOrganizationHistory',
    method: 'GET',
    path: '/ops/audit/organizations/:id/history',
    root: true,
    summary: 'The log positions at which an organization changed (with instant and event type), paged: the marks of a slider',
    tag: 'Audit',
    auth: 'session-or-server',
    params: z.object({ id: z.string().max(255) }),
    query: auditHistoryQuerySchema,
    answer: auditHistoryAnswerSchema,
  }),
};
