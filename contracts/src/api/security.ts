import { z } from 'zod';
import { endpoint } from './endpoint.ts';
import { auditPersonSchema } from './audit.ts';

// The security view: what a security team looks at first (failed sign-ins and lockouts by where they come
// from and whom they aim at, accounts nobody uses, roles nobody holds), read from the log's audit index.

const securityQuerySchema = z.object({
  hours: z.coerce.number().int().min(1).max(24 * 90).default(24).meta({ description: 'the window of sign-in failures and lockouts: the last this many hours' }),
  top: z.coerce.number().int().min(1).max(100).default(10).meta({ description: 'rows of each ranking' }),
  dormantDays: z.coerce.number().int().min(1).max(3650).default(90).meta({ description: 'a user is dormant with no sign-in for this many days' }),
  sample: z.coerce.number().int().min(0).max(200).default(20).meta({ description: 'dormant users listed (all are counted)' }),
});

const addressRowSchema = z.object({
  address: z.string().nullable().meta({ description: 'the client address (null: none recorded, or erased with its user)' }),
  failures: z.number().int().meta({ description: 'failed sign-ins (each attempt once, whichever identifier it named)' }),
  lockouts: z.number().int().meta({ description: 'locks (of an identifier or of an account) that requests from this address set' }),
  rateLimited: z.number().int().meta({ description: 'windows in which the sign-in rate limit refused this address' }),
  lastSeen: z.string(),
});

const accountRowSchema = z.object({
  userId: z.string(),
  person: auditPersonSchema.nullable().meta({ description: 'the account\'s name and email now (null: no such user now)' }),
  failures: z.number().int().meta({ description: 'failed sign-ins to this account, by email or username' }),
  lockouts: z.number().int().meta({ description: 'locks of this account' }),
  lastSeen: z.string(),
});

const dormantUserSchema = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  createdAt: z.string(),
  lastSignInAt: z.string().nullable().meta({ description: 'null: never signed in' }),
});

const roleUseSchema = z.object({
  role: z.string(),
  holders: z.number().int().meta({ description: 'members (organization roles) or users (admin roles) holding it' }),
  unused: z.boolean(),
});

const securityAnswerSchema = z.object({
  window: z.object({ from: z.string(), to: z.string(), hours: z.number().int() }),
  signIns: z.object({
    failures: z.number().int().meta({ description: 'failed sign-ins in the window' }),
    failuresWithoutAccount: z.number().int().meta({ description: 'of those, naming an email or username no account has' }),
    identifierLockouts: z.number().int(),
    accountLockouts: z.number().int(),
    rateLimited: z.number().int(),
    byAddress: z.object({ total: z.number().int().meta({ description: 'distinct addresses' }), top: z.array(addressRowSchema) }),
    byAccount: z.object({ total: z.number().int().meta({ description: 'distinct accounts' }), top: z.array(accountRowSchema) }),
  }),
  dormantUsers: z.object({
    days: z.number().int(),
    total: z.number().int(),
    sample: z.array(dormantUserSchema).meta({ description: 'the longest dormant first' }),
  }),
  roles: z.object({
    organization: z.array(roleUseSchema).meta({ description: 'every organization role, with how many memberships hold it' }),
    admin: z.array(roleUseSchema).meta({ description: 'every admin-plugin role, with how many users hold it' }),
    configuredAdmins: z
      .array(z.object({ userId: z.string(), exists: z.boolean() }))
      .meta({ description: 'ADMIN_USER_IDS, and whether each still names a user' }),
  }),
});
export type SecurityOverview = z.infer<typeof securityAnswerSchema>;

export const securityEndpoints = {
  securityOverview: endpoint({
    operationId: 'securityOverview',
    method: 'GET',
    path: '/ops/security',
    root: true,
    summary: 'The security view: failed sign-ins and lockouts per client address and per account, dormant users, unused roles',
    tag: 'Audit',
    auth: 'session-or-server',
    query: securityQuerySchema,
    answer: securityAnswerSchema,
  }),
};
