import { auditEndpoints, ipOrCidr } from '@portcullis/contracts/api/audit';
import { instantSchema } from '@portcullis/contracts/api/query-filters';
import { actorKinds, type ActorKind } from '@portcullis/contracts/events/define-event';
import { z } from 'zod';
import type { CallInput } from '../api/client.ts';

// The audit search's view in the address bar: every filter of the api's auditFilterSchema under the same
// name, so a link built anywhere (`/audit?user=<id>`, `/audit?ip=<address>`) opens the view it names.

/** The api's cap on values of one filter. */
export const MAX_VALUES = 20;

/** `a, b,,c` → `['a','b','c']`: blanks dropped, each value once, in the order typed. */
export function splitValues(text: string | undefined): string[] {
  if (text === undefined) return [];
  return [...new Set(text.split(',').map((part) => part.trim()).filter((part) => part !== ''))];
}

/** A list filter: values a schema refuses are dropped, so a hand-edited link still opens the rest of its view. */
function listField(accepts: (value: string) => boolean = () => true) {
  return z
    .string()
    .optional()
    .transform((text) => splitValues(text).filter(accepts).slice(0, MAX_VALUES))
    .catch([]);
}

export const isAddressOrRange = (value: string): boolean => ipOrCidr.safeParse(value).success;
export const isActorKind = (value: string): value is ActorKind => (actorKinds as readonly string[]).includes(value);
const isInstant = (value: string): boolean => instantSchema.safeParse(value).success;

export const pageSizes = [25, 50, 100, 200] as const;

export const auditView = z.object({
  user: listField(),
  organization: listField(),
  actor: listField(),
  actorKind: listField(isActorKind),
  ip: listField(isAddressOrRange),
  type: listField(),
  typePrefix: z.string().max(200).optional().catch(undefined),
  stream: listField(),
  from: z.string().refine(isInstant).optional().catch(undefined),
  to: z.string().refine(isInstant).optional().catch(undefined),
  order: z.enum(['newest', 'oldest']).catch('newest'),
  cursor: z.coerce.number().int().min(0).optional().catch(undefined),
  limit: z.coerce.number().int().min(1).max(500).catch(50),
});
export type AuditView = z.output<typeof auditView>;

/** The list filters: each takes several values, typed comma-separated or added one by one. */
export const listFilters = ['user', 'organization', 'actor', 'actorKind', 'ip', 'type', 'stream'] as const;
export type ListFilter = (typeof listFilters)[number];

/** The view of the address bar's query string (`?user=a,b&ip=10.0.0.0/8`), as useSearchState reads it. */
export function viewOfSearch(search: string): AuditView {
  const values: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(search)) values[name] = name in values ? `${values[name]},${value}` : value;
  return auditView.parse(values);
}

type SearchQuery = NonNullable<CallInput<typeof auditEndpoints.auditEvents>['query']>;
type ExportQuery = NonNullable<CallInput<typeof auditEndpoints.auditExport>['query']>;

/** The filters alone, as the search and the export both take them (an empty list: not asked). */
export function filterOf(view: AuditView): ExportQuery {
  const query: ExportQuery = { order: view.order };
  for (const name of ['user', 'organization', 'actor', 'actorKind', 'ip', 'stream'] as const) {
    if (view[name].length > 0) Object.assign(query, { [name]: view[name] });
  }
  if (view.type.length > 0) query.type = view.type.join(',');
  if (view.typePrefix) query.typePrefix = view.typePrefix;
  if (view.from) query.from = view.from;
  if (view.to) query.to = view.to;
  return query;
}

/** What the search is asked for this view: its filters, the page's cursor and length. */
export function searchQueryOf(view: AuditView): SearchQuery {
  return { ...filterOf(view), limit: view.limit, ...(view.cursor !== undefined ? { cursor: view.cursor } : {}) };
}

/** How many filters narrow the view (the order and page length are not filters). */
export function filterCount(view: AuditView): number {
  return listFilters.reduce((sum, name) => sum + view[name].length, 0) + [view.typePrefix, view.from, view.to].filter(Boolean).length;
}

/**
 * The cursor that shows the page before this one (newer events when the newest come first): `lastBefore`
 * is the farthest event of the reversed read that starts at this page's first event, `found` how many it
 * held. Fewer than a page: that page is the first, which has no cursor.
 */
export function previousCursor(order: AuditView['order'], lastBefore: number | undefined, found: number, limit: number): number | undefined {
  if (lastBefore === undefined || found < limit) return undefined;
  return order === 'newest' ? lastBefore + 1 : lastBefore - 1;
}

/** An instant typed into a datetime-local field (local time) as ISO, or undefined when cleared. */
export function isoOfLocal(local: string): string | undefined {
  if (local === '') return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** An ISO instant as a datetime-local field shows it (local time, to the minute). */
export function localOfIso(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
