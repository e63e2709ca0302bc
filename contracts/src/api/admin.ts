import { z } from 'zod';
import { coercedIdSchema } from './coerced-id.ts';
import { endpoint } from './endpoint.ts';
import { sessionSchema } from './session.ts';
import { statusAnswerSchema, userSchema } from './user.ts';

const userIdSchema = coercedIdSchema.pipe(z.string().min(1)).meta({ description: 'The user id' });

/** One role, or several (stored comma-separated). */
const adminRoleInputSchema = z.union([z.string().min(1).max(256), z.array(z.string().min(1).max(256)).min(1).max(32)]);

/** The most users one list-users page answers, as the audit search bounds its pages. */
const MAX_USERS_PAGE = 500;
/** What a page without a limit answers: better-auth answers every user, which a large table cannot afford. */
export const DEFAULT_USERS_PAGE = 100;
/** Postgres' OFFSET takes a bigint; past this no table has rows anyway. */
const MAX_USERS_OFFSET = 2_147_483_647;

/** A whole number in a range, sent as a query string's digits or as a number. */
function pageNumber(min: number, max: number) {
  return z
    .union([z.string().regex(/^\d{1,10}$/, 'must be a whole number').transform(Number), z.number()])
    .pipe(z.number().int().min(min).max(max));
}

const listUsersQuerySchema = z.object({
  searchValue: z.string().max(320).optional(),
  searchField: z.enum(['email', 'name']).optional().meta({ description: 'Defaults to email' }),
  searchOperator: z.enum(['contains', 'starts_with', 'ends_with']).optional().meta({ description: 'Defaults to contains' }),
  limit: pageNumber(1, MAX_USERS_PAGE).optional().meta({ description: `At most ${MAX_USERS_PAGE}; without one, ${DEFAULT_USERS_PAGE} users at most are answered` }),
  offset: pageNumber(0, MAX_USERS_OFFSET).optional(),
  sortBy: z.string().max(64).optional(),
  sortDirection: z.enum(['asc', 'desc']).optional(),
  filterField: z.string().max(64).optional().meta({ description: 'Defaults to email' }),
  filterValue: z.union([z.string().max(320), z.number(), z.boolean(), z.array(z.string().max(320)).max(100)]).optional(),
  filterOperator: z.enum(['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'not_in', 'contains', 'starts_with', 'ends_with']).optional(),
});
export type ListUsersQuery = z.infer<typeof listUsersQuerySchema>;

const listUsersAnswerSchema = z.object({
  users: z.array(userSchema),
  total: z.number(),
  limit: z.number().optional(),
  offset: z.number().optional(),
});

const createUserBodySchema = z.object({
  email: z.string().max(320),
  password: z.string().max(4096).optional().meta({ description: 'Without one the user has no password account' }),
  name: z.string().max(256),
  role: adminRoleInputSchema.optional(),
  data: z.record(z.string(), z.unknown()).optional().meta({ description: 'Further user fields: image, emailVerified, role' }),
});

const adminUpdateUserBodySchema = z.object({
  userId: userIdSchema,
  data: z.record(z.string(), z.unknown()).meta({ description: 'name, image, email, emailVerified, role, banned, banReason, banExpires' }),
});

const setRoleBodySchema = z.object({ userId: userIdSchema, role: adminRoleInputSchema });

/** A hundred years: a longer ban is one without an expiry, and a date past year 9999 is one no database column holds. */
const MAX_BAN_SECONDS = 100 * 365 * 24 * 3600;

const banUserBodySchema = z.object({
  userId: userIdSchema,
  banReason: z.string().max(1024).optional(),
  banExpiresIn: z
    .number()
    .positive()
    .max(MAX_BAN_SECONDS)
    .optional()
    .meta({ description: 'Seconds until the ban lifts itself (at most 100 years); none: until unbanned' }),
});

const userIdBodySchema = z.object({ userId: userIdSchema });

const revokeUserSessionBodySchema = z.object({
  sessionToken: z.string().min(1).max(512).meta({ description: 'The token, or its hash as list-user-sessions shows it' }),
});

const setUserPasswordBodySchema = z.object({
  newPassword: z.string().min(1).max(4096),
  userId: userIdSchema,
});

const permissionsSchema = z.record(z.string().max(64), z.array(z.string().max(64)).max(64));

const adminHasPermissionBodySchema = z.object({
  userId: userIdSchema.optional(),
  role: z.string().max(256).optional(),
  permission: permissionsSchema.optional().meta({ description: 'The spelling of earlier better-auth clients; `permissions` wins when both are sent' }),
  permissions: permissionsSchema.optional(),
});

const userAnswerSchema = z.object({ user: userSchema });
const sessionAndUserSchema = z.object({ session: sessionSchema, user: userSchema });
const successAnswerSchema = z.object({ success: z.boolean() });

export const adminEndpoints = {
  listUsers: endpoint({
    operationId: 'listUsers',
    method: 'GET',
    path: '/admin/list-users',
    summary: 'Users, searched, filtered, sorted and paged (admin)',
    tag: 'Admin',
    auth: 'session',
    query: listUsersQuerySchema,
    answer: listUsersAnswerSchema,
  }),
  getUser: endpoint({
    operationId: 'getUser',
    method: 'GET',
    path: '/admin/get-user',
    summary: 'One user by id (admin)',
    tag: 'Admin',
    auth: 'session',
    query: z.object({ id: z.string().min(1).max(256) }),
    answer: userSchema,
  }),
  createUser: endpoint({
    operationId: 'createUser',
    method: 'POST',
    path: '/admin/create-user',
    summary: 'Creates a user, with a password account when a password is given (admin)',
    tag: 'Admin',
    auth: 'session',
    body: createUserBodySchema,
    answer: userAnswerSchema,
  }),
  updateUser: endpoint({
    operationId: 'adminUpdateUser',
    method: 'POST',
    path: '/admin/update-user',
    summary: 'Changes a user\'s fields (admin)',
    tag: 'Admin',
    auth: 'session',
    body: adminUpdateUserBodySchema,
    answer: userSchema,
  }),
  setRole: endpoint({
    operationId: 'setUserRole',
    method: 'POST',
    path: '/admin/set-role',
    summary: 'Sets a user\'s role or roles (admin)',
    tag: 'Admin',
    auth: 'session',
    body: setRoleBodySchema,
    answer: userAnswerSchema,
  }),
  banUser: endpoint({
    operationId: 'banUser',
    method: 'POST',
    path: '/admin/ban-user',
    summary: 'Bans a user and ends every session of theirs (admin)',
    tag: 'Admin',
    auth: 'session',
    body: banUserBodySchema,
    answer: userAnswerSchema,
  }),
  unbanUser: endpoint({
    operationId: 'unbanUser',
    method: 'POST',
    path: '/admin/unban-user',
    summary: 'Lifts a user\'s ban (admin)',
    tag: 'Admin',
    auth: 'session',
    body: userIdBodySchema,
    answer: userAnswerSchema,
  }),
  impersonateUser: endpoint({
    operationId: 'impersonateUser',
    method: 'POST',
    path: '/admin/impersonate-user',
    summary: 'Opens a session as the user; the admin\'s session is kept in the admin_session cookie (admin)',
    tag: 'Admin',
    auth: 'session',
    body: userIdBodySchema,
    answer: sessionAndUserSchema,
  }),
  stopImpersonating: endpoint({
    operationId: 'stopImpersonating',
    method: 'POST',
    path: '/admin/stop-impersonating',
    summary: 'Ends the impersonation session and restores the admin\'s own',
    tag: 'Admin',
    auth: 'session',
    answer: sessionAndUserSchema,
  }),
  listUserSessions: endpoint({
    operationId: 'adminListUserSessions',
    method: 'POST',
    path: '/admin/list-user-sessions',
    summary: 'A user\'s active sessions; `token` holds each token\'s hash (admin)',
    tag: 'Admin',
    auth: 'session',
    body: userIdBodySchema,
    answer: z.object({ sessions: z.array(sessionSchema) }),
  }),
  revokeUserSession: endpoint({
    operationId: 'revokeUserSession',
    method: 'POST',
    path: '/admin/revoke-user-session',
    summary: 'Ends one session of any user, by its token or token hash (admin)',
    tag: 'Admin',
    auth: 'session',
    body: revokeUserSessionBodySchema,
    answer: successAnswerSchema,
  }),
  revokeUserSessions: endpoint({
    operationId: 'revokeUserSessions',
    method: 'POST',
    path: '/admin/revoke-user-sessions',
    summary: 'Ends every session of a user (admin)',
    tag: 'Admin',
    auth: 'session',
    body: userIdBodySchema,
    answer: successAnswerSchema,
  }),
  removeUser: endpoint({
    operationId: 'removeUser',
    method: 'POST',
    path: '/admin/remove-user',
    summary: 'Deletes a user with everything of theirs (admin)',
    tag: 'Admin',
    auth: 'session',
    body: userIdBodySchema,
    answer: successAnswerSchema,
  }),
  setUserPassword: endpoint({
    operationId: 'setUserPassword',
    method: 'POST',
    path: '/admin/set-user-password',
    summary: 'Sets a user\'s password, creating their password account if needed (admin)',
    tag: 'Admin',
    auth: 'session',
    body: setUserPasswordBodySchema,
    answer: statusAnswerSchema,
  }),
  hasPermission: endpoint({
    operationId: 'userHasPermission',
    method: 'POST',
    path: '/admin/has-permission',
    summary: 'Whether the caller\'s roles grant the permissions asked',
    tag: 'Admin',
    auth: 'session',
    body: adminHasPermissionBodySchema,
    answer: z.object({ error: z.null(), success: z.boolean() }),
  }),
};
