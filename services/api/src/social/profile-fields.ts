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

/**
 * A provider's answer as it sent it (`ProviderProfile.raw`): the JSON object before a schema above read it
 * (and dropped the fields it does not read), or an id token's claims. Called with what a `z.object` schema
 * accepted, so an object; anything else is no answer to keep.
 */
export function rawAnswer(answer: unknown): Readonly<Record<string, unknown>> {
  return typeof answer === 'object' && answer !== null && !Array.isArray(answer) ? (answer as Record<string, unknown>) : {};
}
