import { z } from 'zod';
import { defineEvent, superseded } from './define-event.ts';

const tokenHash = z.string().regex(/^[0-9a-f]{64}$/);

const sessionCreatedFields = {
  sessionId: z.string(),
  userId: z.string(),
  tokenHash,
  expiresAt: z.string(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  rememberMe: z.boolean(),
};

/** The first version: sign-ins by password, sign-up and a verification link only. */
const SessionCreatedV1 = defineEvent(
  'session.created.v1',
  z.object({
    ...sessionCreatedFields,
    method: z.enum(['sign-up', 'email-password', 'email-verification', 'username-password']),
  }),
);

/**
 * Stream `session-<sessionId>`. `tokenHash` is the SHA-256 (hex) of the session token; the token itself is
 * never stored. `method` says how the user got in; `social` and `id-token` name the provider.
 */
export const SessionCreated = defineEvent(
  'session.created.v2',
  z.object({
    ...sessionCreatedFields,
    method: z.enum(['sign-up', 'email-password', 'email-verification', 'username-password', 'social', 'id-token']),
    providerId: z.string().nullable().default(null),
  }),
);

export const SessionRefreshed = defineEvent(
  'session.refreshed.v1',
  z.object({ sessionId: z.string(), userId: z.string(), expiresAt: z.string() }),
);

export const SessionUpdated = defineEvent(
  'session.updated.v1',
  z.object({ sessionId: z.string(), userId: z.string(), changes: z.record(z.string(), z.unknown()) }),
);

/** The first version: no token hash, so the cache could only find the session through an index of its own. */
const SessionRevokedV1 = defineEvent(
  'session.revoked.v1',
  z.object({
    sessionId: z.string(),
    userId: z.string(),
    reason: z.enum(['signed_out', 'revoked', 'revoked_all', 'revoked_others', 'expired']),
  }),
);

const sessionEndReasons = [
  'signed_out',
  'revoked',
  'revoked_all',
  'revoked_others',
  'expired',
  'password_reset',
  'password_changed',
  'user_deleted',
  'banned',
  'revoked_by_admin',
  'impersonation_ended',
] as const;
export type SessionEndReason = (typeof sessionEndReasons)[number];

/**
 * Stream `session-<sessionId>`: the session is over. It names its token's hash, so every cache can drop the
 * session by the key it is held under, without an index that could be lost (v1 events have none: null).
 */
export const SessionRevoked = defineEvent(
  'session.revoked.v2',
  z.object({ sessionId: z.string(), userId: z.string(), tokenHash: tokenHash.nullable(), reason: z.enum(sessionEndReasons) }),
);

/**
 * Stream `user-sessions-<userId>`: the sessions a user opened, so that ending all of them is decided on the
 * log. A session's opening is appended here in the same atomic write as its creation; an ending of all of a
 * user's sessions appends here against the version it read, so it cannot miss one opened meanwhile.
 */
export const SessionOpened = defineEvent(
  'session_index.session_opened.v1',
  z.object({ userId: z.string(), sessionId: z.string(), tokenHash, expiresAt: z.string() }),
);

/** Stream `user-sessions-<userId>`: a refresh gave the session a later expiry. */
export const SessionExtended = defineEvent(
  'session_index.session_extended.v1',
  z.object({ userId: z.string(), sessionId: z.string(), expiresAt: z.string() }),
);

/** Stream `user-sessions-<userId>`: these sessions have ended (each has its `session.revoked` on its own stream). */
export const SessionsClosed = defineEvent(
  'session_index.sessions_closed.v1',
  z.object({ userId: z.string(), sessionIds: z.array(z.string()).min(1) }),
);

export const sessionEventHistory = [
  superseded(SessionCreatedV1, SessionCreated, (data) => ({ ...data, providerId: null })),
  superseded(SessionRevokedV1, SessionRevoked, (data) => ({ ...data, tokenHash: null })),
];
