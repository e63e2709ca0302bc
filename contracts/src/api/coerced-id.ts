import { z } from 'zod';

/**
 * A user id in a body as better-auth takes it (`z.coerce.string()`): a string, or a number sent for one.
 * Coercing anything at all would turn `null` into the id "null" and an array into "a,b"; those are refused.
 */
export const coercedIdSchema = z
  .union([z.string(), z.number()])
  .transform(String)
  .pipe(z.string().max(256));
