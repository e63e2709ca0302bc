import { z } from 'zod';
import { userSchema } from './user.ts';

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

export const revokeSessionBodySchema = z.object({ token: z.string().min(1).max(512) });

export const updateSessionBodySchema = z.record(z.string(), z.unknown()).meta({
  description: 'POST /update-session: additional session fields (none are defined yet)',
});

export const listSessionsAnswerSchema = z.array(sessionSchema);
