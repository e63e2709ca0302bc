import { z } from 'zod';

/** Schemas for the fields providers describe users with, so an answer of another shape is no profile. */

/** A provider's user id, which some send as a number (GitHub, GitLab): kept as the string it spells. */
export const providerUserId = z.union([z.string().min(1), z.number().int()]).transform(String);

/** A field that may be absent, null or empty: all three are null. */
export const optionalText = z
  .string()
  .nullish()
  .transform((value) => (value ? value : null));

/** OIDC's `email_verified`, which some providers send as the strings "true" and "false" (Apple). */
export const claimedFlag = z
  .union([z.boolean(), z.enum(['true', 'false'])])
  .nullish()
  .transform((value) => value === true || value === 'true');
