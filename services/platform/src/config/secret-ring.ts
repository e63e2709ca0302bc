import type { ParsedList } from '../perimeter-settings.ts';

/** The shortest secret taken: 32 characters, as better-auth asks of its own. */
export const SECRET_MIN_LENGTH = 32;

/**
 * `AUTH_SECRETS` as written: comma-separated, newest first, each at least 32 characters, none twice. The
 * problems name an entry by its place in the list, never by its value (they are printed at start).
 */
export function parseSecretRing(value: string): ParsedList<string> {
  const entries = value.split(',').map((entry) => entry.trim());
  const problems: string[] = [];
  entries.forEach((entry, index) => {
    const place = `entry ${index + 1} of ${entries.length}`;
    if (entry === '') problems.push(`${place} is empty`);
    else if (entry.length < SECRET_MIN_LENGTH) problems.push(`${place} must be at least ${SECRET_MIN_LENGTH} characters`);
    else if (entries.indexOf(entry) < index) problems.push(`${place} repeats entry ${entries.indexOf(entry) + 1}`);
  });
  return { values: problems.length === 0 ? entries : [], problems };
}
