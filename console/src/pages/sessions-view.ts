import { opsSessionSortFields, type OpsSessionsQuery } from '@portcullis/contracts/api/console-ops';
import { ipOrCidrSchema } from '@portcullis/contracts/api/query-filters';
import { z } from 'zod';

// The sessions list's state as the address bar holds it, and the query the api is asked with: pure, so the
// form, the link and the request agree on one reading.

/** The most user ids one view filters on, as the api bounds the list. */
const MAX_USERS = 100;

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;
type Unit = keyof typeof UNITS;

/** `90s`, `30m`, `2h`, `7d`, `1w` or bare seconds as a number of seconds; null when it is none of these. */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d{1,9})\s*([smhdw]?)\s*$/i.exec(text);
  if (!match) return null;
  const unit = (match[2] || 's').toLowerCase() as Unit;
  return Number(match[1]) * UNITS[unit];
}

/** Seconds in the largest unit that divides them (`86400` → `1d`), as an operator would type it. */
export function formatDuration(seconds: number): string {
  for (const unit of ['w', 'd', 'h', 'm'] as const) {
    if (seconds > 0 && seconds % UNITS[unit] === 0) return `${seconds / UNITS[unit]}${unit}`;
  }
  return `${seconds}s`;
}

/** Ids typed or pasted any way (commas, spaces, new lines), each once, in the order given. */
export function splitIds(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).map((id) => id.trim()).filter((id) => id !== ''))];
}

const duration = z
  .string()
  .refine((text) => parseDuration(text) !== null)
  .catch('');

export const sessionsView = z.object({
  user: z
    .string()
    .transform(splitIds)
    .pipe(z.array(z.string().max(255)).max(MAX_USERS))
    .catch([]),
  ip: z
    .string()
    .max(64)
    .refine((text) => ipOrCidrSchema.safeParse(text).success)
    .catch(''),
  /** Opened at least this long ago (`7d`). */
  olderThan: duration,
  /** Opened at most this long ago (`1h`). */
  newerThan: duration,
  impersonated: z.enum(['true']).optional().catch(undefined),
  sortBy: z.enum(opsSessionSortFields).catch('createdAt'),
  sortDirection: z.enum(['asc', 'desc']).catch('desc'),
  offset: z.coerce.number().int().min(0).catch(0),
  limit: z.coerce.number().int().min(1).max(200).catch(50),
});
export type SessionsView = z.output<typeof sessionsView>;

/** What the view asks the api: absent filters left out, ages in seconds. */
export function sessionsQueryOf(view: SessionsView): OpsSessionsQuery {
  const minAge = view.olderThan ? parseDuration(view.olderThan) : null;
  const maxAge = view.newerThan ? parseDuration(view.newerThan) : null;
  return {
    ...(view.user.length > 0 ? { user: view.user } : {}),
    ...(view.ip ? { ip: view.ip } : {}),
    ...(minAge !== null ? { minAgeSeconds: minAge } : {}),
    ...(maxAge !== null ? { maxAgeSeconds: maxAge } : {}),
    ...(view.impersonated ? { impersonated: 'true' as const } : {}),
    sortBy: view.sortBy,
    sortDirection: view.sortDirection,
    limit: view.limit,
    offset: view.offset,
  };
}

/** The filter form's fields as typed, before they are applied. */
export interface SessionsFilterDraft {
  readonly users: string;
  readonly ip: string;
  readonly olderThan: string;
  readonly newerThan: string;
  readonly impersonated: boolean;
}

export function draftOf(view: SessionsView): SessionsFilterDraft {
  return { users: view.user.join(', '), ip: view.ip, olderThan: view.olderThan, newerThan: view.newerThan, impersonated: view.impersonated === 'true' };
}

export type DraftProblems = Partial<Record<keyof SessionsFilterDraft, string>>;

/**
 * The draft as a change of the view (back to the first page), or what is wrong with it: a typo is said
 * where it was made, not dropped silently by the address bar's schema.
 */
export function applyDraft(draft: SessionsFilterDraft): { readonly patch: Partial<SessionsView> } | { readonly problems: DraftProblems } {
  const problems: DraftProblems = {};
  const users = splitIds(draft.users);
  if (users.length > MAX_USERS) problems.users = `at most ${MAX_USERS} users`;
  else if (users.some((id) => id.length > 255)) problems.users = 'an id is longer than 255 characters';
  const ip = draft.ip.trim();
  if (ip !== '' && !ipOrCidrSchema.safeParse(ip).success) problems.ip = 'an IP address or a CIDR range (203.0.113.0/24)';
  const older = draft.olderThan.trim();
  const newer = draft.newerThan.trim();
  if (older !== '' && parseDuration(older) === null) problems.olderThan = 'a duration: 90s, 30m, 2h, 7d, 1w';
  if (newer !== '' && parseDuration(newer) === null) problems.newerThan = 'a duration: 90s, 30m, 2h, 7d, 1w';
  if (Object.keys(problems).length > 0) return { problems };
  return {
    patch: {
      user: users,
      ip,
      olderThan: older.toLowerCase().replace(/\s+/g, ''),
      newerThan: newer.toLowerCase().replace(/\s+/g, ''),
      impersonated: draft.impersonated ? 'true' : undefined,
      offset: 0,
    },
  };
}
