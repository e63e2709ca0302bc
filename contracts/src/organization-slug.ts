/**
 * What an organization slug may be, and the one form it is compared and stored in. better-auth compares
 * slugs as sent, so `acme`, `ACME`, `acme ` and full-width `ａｃｍｅ` were four organizations, each able to
 * send invitations that look like the real one's. A slug is taken in its NFKC form (full-width and other
 * compatibility characters become the ASCII they stand for), lower case, without surrounding space; that
 * form must be letters a-z and digits, in runs joined by single `-`, `_` or `.` (so neither `../x` nor a
 * script another alphabet could imitate `acme` in).
 */
const SLUG_MAX_LENGTH = 100;

const SLUG_PATTERN = /^[a-z0-9]+(?:[._-][a-z0-9]+)*$/;

export function normalizeSlug(slug: string): string {
  return slug.normalize('NFKC').toLowerCase().trim();
}

/** Whether a normalized slug is one an organization may hold. */
export function isValidSlug(normalized: string): boolean {
  return normalized.length <= SLUG_MAX_LENGTH && SLUG_PATTERN.test(normalized);
}
