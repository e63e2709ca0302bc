import { z } from 'zod';
import { sessionSchema } from './api/session.ts';
import { userSchema } from './api/user.ts';

/**
 * A session as the Redis cache holds it, keyed by the token's hash. It has no `token` (the cache never holds
 * one); the api adds the caller's own token when it answers.
 */
export const cachedSessionSchema = z.object({
  session: sessionSchema.omit({ token: true }).extend({ rememberMe: z.boolean() }),
  user: userSchema,
});
export type CachedSession = z.infer<typeof cachedSessionSchema>;
