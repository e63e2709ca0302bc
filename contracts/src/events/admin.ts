import { z } from 'zod';
import { defineEvent } from './define-event.ts';

/**
 * Stream `user-<userId>`: the admin plugin's role, as better-auth stores it (several roles comma-separated).
 * A user without this event holds the default role `user`.
 */
export const UserRoleChanged = defineEvent('user.role_changed.v1', z.object({ userId: z.string(), role: z.string().min(1) }));

/**
 * Stream `user-<userId>`: the user may not sign in until `expiresAt` (null: until unbanned). The sessions it
 * ends are revoked on their own streams in the same append, with reason `banned`.
 */
export const UserBanned = defineEvent(
  'user.banned.v1',
  z.object({ userId: z.string(), reason: z.string(), expiresAt: z.string().nullable() }),
);

/**
 * Stream `user-<userId>`: the ban is over, lifted by an admin, or found expired by a sign-in (which clears it
 * as better-auth does, so the user no longer shows as banned).
 */
export const UserUnbanned = defineEvent('user.unbanned.v1', z.object({ userId: z.string(), reason: z.enum(['admin', 'expired']) }));

/**
 * Stream `session-<sessionId>`: a session opened by an admin impersonating the user, in place of
 * `session.created.v2` (whose published shape has no impersonator). Short-lived, never remembered beyond
 * its lifetime; `impersonatedBy` names the admin, as better-auth's session field does.
 */
export const ImpersonationStarted = defineEvent(
  'session.impersonation_started.v1',
  z.object({
    sessionId: z.string(),
    userId: z.string(),
    tokenHash: z.string().regex(/^[0-9a-f]{64}$/),
    expiresAt: z.string(),
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    impersonatedBy: z.string(),
  }),
);

const sessionIndexEntry = {
  adminId: z.string(),
  userId: z.string(),
  sessionId: z.string(),
  tokenHash: z.string().regex(/^[0-9a-f]{64}$/),
  expiresAt: z.string(),
};

/**
 * Stream `impersonations-<adminId>`: the sessions an admin opened by impersonating someone, appended in the
 * same atomic write as the session's own opening. Ending every session of the admin (a ban, a removal, a
 * password reset) is decided on this stream too, so an impersonation session never outlives its opener's
 * fall; the append requires the version read, so one opened meanwhile makes that command decide again.
 */
export const ImpersonationOpened = defineEvent('impersonation_index.session_opened.v1', z.object(sessionIndexEntry));

/** Stream `impersonations-<adminId>`: these impersonation sessions are over (each ended on its own stream). */
export const ImpersonationsClosed = defineEvent(
  'impersonation_index.sessions_closed.v1',
  z.object({ adminId: z.string(), sessionIds: z.array(z.string()).min(1) }),
);
