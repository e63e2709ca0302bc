import { z } from 'zod';
import { defineEvent } from './define-event.ts';

/** Stream `session-<sessionId>`. `tokenHash` is the SHA-256 (hex) of the session token; the token itself is never stored. */
export const SessionCreated = defineEvent(
  'session.created.v1',
  z.object({
    sessionId: z.string(),
    userId: z.string(),
    tokenHash: z.string().regex(/^[0-9a-f]{64}$/),
    expiresAt: z.string(),
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    rememberMe: z.boolean(),
    // Widened (additive) with 'email-verification': auto sign-in from a verification link, and
    // 'username-password': POST /sign-in/username.
    method: z.enum(['sign-up', 'email-password', 'email-verification', 'username-password']),
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

export const sessionEndReasons = ['signed_out', 'revoked', 'revoked_all', 'revoked_others', 'expired'] as const;

export const SessionRevoked = defineEvent(
  'session.revoked.v1',
  z.object({ sessionId: z.string(), userId: z.string(), reason: z.enum(sessionEndReasons) }),
);
