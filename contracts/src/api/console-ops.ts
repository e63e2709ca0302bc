import { z } from 'zod';
import { endpoint } from './endpoint.ts';
import { idListSchema, instantSchema, ipOrCidrSchema, queryFlagSchema } from './query-filters.ts';
import { userSchema } from './user.ts';

// The ops console's admin views of users, sessions and organizations (Keycloak's and ZITADEL's admin
// consoles): read from the read models for any user or organization, which better-auth's own endpoints
// (membership-scoped, one user at a time) do not answer. Every user named carries its name and email.

/** The most rows one page answers. */
const MAX_PAGE = 500;
/** Postgres' OFFSET takes a bigint; past this no table has rows anyway. */
const MAX_OFFSET = 2_147_483_647;
/** The most users one bulk action acts on. */
export const MAX_BULK_USERS = 100;

const limitSchema = z.coerce.number().int().min(1).max(MAX_PAGE).default(50).meta({ description: `At most ${MAX_PAGE}` });
const offsetSchema = z.coerce.number().int().min(0).max(MAX_OFFSET).default(0);
const sortDirectionSchema = z.enum(['asc', 'desc']).default('desc');

/**
 * A user where one is named: its id, with the name and email it has now (null for a user no longer there,
 * a deleted one say).
 */
export const userRefSchema = z
  .object({ id: z.string(), name: z.string().nullable(), email: z.string().nullable() })
  .meta({ id: 'UserRef' });
export type UserRef = z.infer<typeof userRefSchema>;

const pageFields = { total: z.number().int().meta({ description: 'how many matched, over every page' }), limit: z.number().int(), offset: z.number().int() };

// Sessions

export const opsSessionSortFields = ['createdAt', 'expiresAt', 'updatedAt'] as const;

const opsSessionsQuerySchema = z.object({
  user: idListSchema(100).optional().meta({ description: 'sessions of these user ids: comma-separated, or the parameter repeated' }),
  ip: ipOrCidrSchema.optional().meta({ description: 'client address, or a CIDR range it falls in' }),
  createdAfter: instantSchema.optional().meta({ description: 'opened at or after this instant' }),
  createdBefore: instantSchema.optional().meta({ description: 'opened before this instant' }),
  minAgeSeconds: z.coerce.number().int().min(0).max(MAX_OFFSET).optional().meta({ description: 'opened at least this many seconds ago' }),
  maxAgeSeconds: z.coerce.number().int().min(0).max(MAX_OFFSET).optional().meta({ description: 'opened at most this many seconds ago' }),
  impersonated: queryFlagSchema.optional().meta({ description: 'true: impersonation sessions only; false: none of them' }),
  sortBy: z.enum(opsSessionSortFields).default('createdAt').meta({ description: '`updatedAt` is the last refresh: the last sign of activity the read model keeps' }),
  sortDirection: sortDirectionSchema,
  limit: limitSchema,
  offset: offsetSchema,
});
export type OpsSessionsQuery = z.input<typeof opsSessionsQuerySchema>;

export const opsSessionSchema = z
  .object({
    id: z.string(),
    tokenHash: z.string().meta({ description: 'the SHA-256 of its token (never the token): revokeUserSession takes it as `sessionToken`' }),
    user: userRefSchema,
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string().meta({ description: 'the last refresh' }),
    expiresAt: z.string(),
    activeOrganizationId: z.string().nullable(),
    impersonatedBy: userRefSchema.nullable().meta({ description: 'the admin who opened it by impersonation' }),
  })
  .meta({ id: 'OpsSession' });
export type OpsSession = z.infer<typeof opsSessionSchema>;

const opsSessionsAnswerSchema = z.object({ sessions: z.array(opsSessionSchema), ...pageFields });
export type OpsSessionsAnswer = z.infer<typeof opsSessionsAnswerSchema>;

// Organizations

export const opsOrganizationSortFields = ['name', 'slug', 'createdAt', 'memberCount'] as const;

const opsOrganizationsQuerySchema = z.object({
  search: z.string().max(256).optional().meta({ description: 'part of the name or the slug (case-insensitive)' }),
  sortBy: z.enum(opsOrganizationSortFields).default('createdAt'),
  sortDirection: sortDirectionSchema,
  limit: limitSchema,
  offset: offsetSchema,
});
export type OpsOrganizationsQuery = z.input<typeof opsOrganizationsQuerySchema>;

export const opsOrganizationSummarySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    logo: z.string().nullable(),
    createdAt: z.string(),
    memberCount: z.number().int(),
  })
  .meta({ id: 'OpsOrganizationSummary' });
export type OpsOrganizationSummary = z.infer<typeof opsOrganizationSummarySchema>;

const opsOrganizationsAnswerSchema = z.object({ organizations: z.array(opsOrganizationSummarySchema), ...pageFields });
export type OpsOrganizationsAnswer = z.infer<typeof opsOrganizationsAnswerSchema>;

const opsMemberSchema = z.object({
  id: z.string().meta({ description: 'the membership id' }),
  user: userRefSchema,
  role: z.string().meta({ description: 'one role, or several comma-separated' }),
  createdAt: z.string(),
});

const opsInvitationSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.string(),
  status: z.string().meta({ description: 'pending, accepted, rejected or canceled' }),
  expired: z.boolean().meta({ description: 'pending past its expiry' }),
  teamId: z.string().nullable(),
  inviter: userRefSchema,
  expiresAt: z.string(),
  createdAt: z.string(),
});

const opsTeamSchema = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.string(),
  updatedAt: z.string().nullable(),
  members: z.array(z.object({ id: z.string(), user: userRefSchema, createdAt: z.string() })),
});

const opsOrganizationAnswerSchema = z.object({
  organization: opsOrganizationSummarySchema.extend({ metadata: z.record(z.string(), z.unknown()).nullable() }),
  members: z.array(opsMemberSchema),
  invitations: z.array(opsInvitationSchema),
  teams: z.array(opsTeamSchema),
});
export type OpsOrganizationAnswer = z.infer<typeof opsOrganizationAnswerSchema>;

// Users

const opsAccountSchema = z.object({
  id: z.string(),
  providerId: z.string().meta({ description: '`credential` for the password account' }),
  accountId: z.string(),
  scopes: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const opsUserAnswerSchema = z.object({
  user: userSchema,
  accounts: z.array(opsAccountSchema).meta({ description: 'never a token or a password hash' }),
  organizations: z.array(z.object({ id: z.string(), name: z.string(), slug: z.string(), role: z.string(), memberSince: z.string() })),
  sessionCount: z.number().int().meta({ description: 'live sessions' }),
  lastSignInAt: z.string().nullable().meta({ description: 'when the user last opened a session (impersonations aside); null: never' }),
});
export type OpsUserAnswer = z.infer<typeof opsUserAnswerSchema>;

// Lookup

export const opsLookupKinds = ['user', 'session', 'organization', 'invitation', 'team', 'mail-job', 'event'] as const;

const opsLookupMatchSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user'), id: z.string(), user: userRefSchema }),
  z.object({
    kind: z.literal('session'),
    id: z.string(),
    user: userRefSchema,
    live: z.boolean().meta({ description: 'false: it ended (known from the log only)' }),
    tokenHash: z.string().nullable().meta({ description: 'while live, for revokeUserSession' }),
  }),
  z.object({ kind: z.literal('organization'), id: z.string(), name: z.string(), slug: z.string() }),
  z.object({ kind: z.literal('invitation'), id: z.string(), organizationId: z.string(), organizationName: z.string().nullable(), email: z.string(), status: z.string() }),
  z.object({ kind: z.literal('team'), id: z.string(), name: z.string(), organizationId: z.string(), organizationName: z.string().nullable() }),
  z.object({ kind: z.literal('mail-job'), id: z.string(), mailKind: z.string(), status: z.string(), user: userRefSchema.nullable() }),
  z.object({
    kind: z.literal('event'),
    id: z.string().meta({ description: 'the event id' }),
    position: z.number().int(),
    streamId: z.string(),
    type: z.string(),
    recordedAt: z.string(),
  }),
]);
export type OpsLookupMatch = z.infer<typeof opsLookupMatchSchema>;

const opsLookupAnswerSchema = z.object({
  id: z.string(),
  matches: z.array(opsLookupMatchSchema).min(1).meta({ description: 'every object the id names (a uuid may be an event\'s and a mail job\'s)' }),
});
export type OpsLookupAnswer = z.infer<typeof opsLookupAnswerSchema>;

// Bulk

export const opsBulkActions = ['revoke-sessions', 'ban', 'unban'] as const;

const opsUsersBulkBodySchema = z.object({
  action: z.enum(opsBulkActions),
  userIds: z.array(z.string().min(1).max(255)).min(1).max(MAX_BULK_USERS),
  banReason: z.string().max(1024).optional().meta({ description: 'ban only' }),
  banExpiresIn: z.number().positive().max(100 * 365 * 24 * 3600).optional().meta({ description: 'ban only: seconds until it lifts itself; none: until unbanned' }),
});
export type OpsUsersBulkBody = z.input<typeof opsUsersBulkBodySchema>;

const opsBulkResultSchema = z.object({
  user: userRefSchema,
  ok: z.boolean(),
  code: z.string().nullable().meta({ description: 'the catalogue code it was refused with (USER_NOT_FOUND, YOU_CANNOT_BAN_ADMINS...)' }),
  message: z.string().nullable(),
});

const opsUsersBulkAnswerSchema = z.object({
  action: z.enum(opsBulkActions),
  results: z.array(opsBulkResultSchema).meta({ description: 'one per user asked, in the order asked' }),
  succeeded: z.number().int(),
  failed: z.number().int(),
});
export type OpsUsersBulkAnswer = z.infer<typeof opsUsersBulkAnswerSchema>;

export const consoleOpsEndpoints = {
  opsSessions: endpoint({
    operationId: 'opsSessions',
    method: 'GET',
    path: '/ops/sessions',
    root: true,
    summary: 'Live sessions of every user, filtered (users, address or CIDR, age, impersonation), sorted and paged',
    tag: 'Console',
    auth: 'session-or-server',
    query: opsSessionsQuerySchema,
    answer: opsSessionsAnswerSchema,
  }),
  opsOrganizations: endpoint({
    operationId: 'opsOrganizations',
    method: 'GET',
    path: '/ops/organizations',
    root: true,
    summary: 'Every organization, searched by name or slug, with its member count, sorted and paged',
    tag: 'Console',
    auth: 'session-or-server',
    query: opsOrganizationsQuerySchema,
    answer: opsOrganizationsAnswerSchema,
  }),
  opsOrganization: endpoint({
    operationId: 'opsOrganization',
    method: 'GET',
    path: '/ops/organizations/:id',
    root: true,
    summary: 'One organization with its members, invitations and teams (any organization: the operator\'s view)',
    tag: 'Console',
    auth: 'session-or-server',
    params: z.object({ id: z.string().min(1).max(255) }),
    answer: opsOrganizationAnswerSchema,
  }),
  opsUser: endpoint({
    operationId: 'opsUser',
    method: 'GET',
    path: '/ops/users/:id',
    root: true,
    summary: 'One user for the user page: the user, its accounts, organizations, live session count and last sign-in',
    tag: 'Console',
    auth: 'session-or-server',
    params: z.object({ id: z.string().min(1).max(255) }),
    answer: opsUserAnswerSchema,
  }),
  opsLookup: endpoint({
    operationId: 'opsLookup',
    method: 'GET',
    path: '/ops/lookup',
    root: true,
    summary: 'What an id pasted from a log names (user, session, organization, invitation, team, mail job, event id or log position); 404 when nothing',
    tag: 'Console',
    auth: 'session-or-server',
    query: z.object({ id: z.string().trim().min(1).max(255) }),
    answer: opsLookupAnswerSchema,
  }),
  opsUsersBulk: endpoint({
    operationId: 'opsUsersBulk',
    method: 'POST',
    path: '/ops/users/bulk',
    root: true,
    summary: 'Revokes the sessions of, bans or unbans up to 100 users as the signed-in admin, answering each user\'s result',
    tag: 'Console',
    auth: 'session',
    body: opsUsersBulkBodySchema,
    answer: opsUsersBulkAnswerSchema,
  }),
};
