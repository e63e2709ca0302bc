import { z } from 'zod';
import { signOutAnswerSchema } from './credentials.ts';
import { endpoint } from './endpoint.ts';
import { statusAnswerSchema, userSchema } from './user.ts';

export const sessionSchema = z.object({
  id: z.string(),
  userId: z.string(),
  token: z.string(),
  expiresAt: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  // The organization plugin's fields: the organization and team the session works in, null when none.
  activeOrganizationId: z.string().nullable(),
  activeTeamId: z.string().nullable(),
  // The admin plugin's field: the admin who opened this session by impersonating its user.
  impersonatedBy: z.string().nullable(),
});
export type Session = z.infer<typeof sessionSchema>;

export const sessionAnswerSchema = z.object({ session: sessionSchema, user: userSchema });
export type SessionAnswer = z.infer<typeof sessionAnswerSchema>;

/** Query flags arrive as strings on GET and as booleans in a POST body. */
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).optional();

export const getSessionQuerySchema = z.object({
  disableCookieCache: flag,
  disableRefresh: flag,
});

const revokeSessionBodySchema = z.object({ token: z.string().min(1).max(512) });

const updateSessionBodySchema = z.record(z.string(), z.unknown()).meta({
  description: 'POST /update-session: additional session fields (none are defined yet)',
});

const listSessionsAnswerSchema = z.array(sessionSchema);

const updateSessionAnswerSchema = z.object({ session: sessionSchema });

export const sessionEndpoints = {
  getSession: endpoint({
    operationId: 'getSession',
    method: ['GET', 'POST'],
    path: '/get-session',
    summary: 'The caller\'s session and user, or null; refreshes the session when it is due',
    tag: 'Session',
    auth: 'optional',
    query: getSessionQuerySchema,
    answer: sessionAnswerSchema.nullable(),
  }),
  signOut: endpoint({
    operationId: 'signOut',
    method: 'POST',
    path: '/sign-out',
    summary: 'Ends the caller\'s session and clears its cookies',
    tag: 'Session',
    auth: 'optional',
    answer: signOutAnswerSchema,
  }),
  listSessions: endpoint({
    operationId: 'listSessions',
    method: 'GET',
    path: '/list-sessions',
    summary: 'The caller\'s active sessions; others carry their token\'s hash in `token`',
    tag: 'Session',
    auth: 'session',
    answer: listSessionsAnswerSchema,
  }),
  revokeSession: endpoint({
    operationId: 'revokeSession',
    method: 'POST',
    path: '/revoke-session',
    summary: 'Ends one of the caller\'s sessions, by its token or the hash list-sessions shows',
    tag: 'Session',
    auth: 'session',
    body: revokeSessionBodySchema,
    answer: statusAnswerSchema,
  }),
  revokeSessions: endpoint({
    operationId: 'revokeSessions',
    method: 'POST',
    path: '/revoke-sessions',
    summary: 'Ends every session of the caller',
    tag: 'Session',
    auth: 'session',
    answer: statusAnswerSchema,
  }),
  revokeOtherSessions: endpoint({
    operationId: 'revokeOtherSessions',
    method: 'POST',
    path: '/revoke-other-sessions',
    summary: 'Ends every session of the caller but this one',
    tag: 'Session',
    auth: 'session',
    answer: statusAnswerSchema,
  }),
  updateSession: endpoint({
    operationId: 'updateSession',
    method: 'POST',
    path: '/update-session',
    summary: 'Sets additional session fields (none are defined: answers NO_FIELDS_TO_UPDATE)',
    tag: 'Session',
    auth: 'session',
    body: updateSessionBodySchema,
    answer: updateSessionAnswerSchema,
  }),
};
