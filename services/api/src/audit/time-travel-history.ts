import { organizationNamingTypes, streams } from '@portcullis/contracts';
import type { EventStore, RecordedEvent } from '@portcullis/platform';

export interface HistoryQuery {
  readonly order: 'newest' | 'oldest';
  readonly cursor?: number | undefined;
  readonly limit: number;
}

export interface HistoryPage {
  readonly id: string;
  readonly points: Array<{ position: number; occurredAt: string; recordedAt: string; type: string; streamId: string }>;
  readonly total: number;
  readonly nextCursor: number | null;
}

type HistoryStore = Pick<EventStore, 'readStream' | 'readStreams'>;

/**
 * The events of a user's history that time travel folds: every event of the user's own streams (profile,
 * account, ban and role; sessions; organization index), and of each organization they ever joined (any
 * their index ever named), those that name them (joined, role changed, left) or rename or delete it. Read
 * from the log itself, not the audit index, so the slider never lacks an event the state already shows:
 * the streams time travel folds, read as it reads them.
 */
async function userHistory(store: HistoryStore, userId: string): Promise<RecordedEvent[]> {
  const own = [streams.user(userId), streams.userSessions(userId), streams.userOrganizations(userId)];
  const reads = await store.readStreams(own);
  const joined = new Set<string>();
  for (const event of reads.get(streams.userOrganizations(userId))?.events ?? []) {
    const organizationId = (event.data as { organizationId?: unknown } | null)?.organizationId;
    if (typeof organizationId === 'string') joined.add(organizationId);
  }
  const organizations = await store.readStreams([...joined].map((id) => streams.organization(id)));
  const ofOrganizations = [...organizations.values()].flatMap((read) =>
    read.events.filter((event) => (event.data as { userId?: unknown } | null)?.userId === userId || organizationNamingTypes.has(event.type)),
  );
  return [...own.flatMap((id) => reads.get(id)?.events ?? []), ...ofOrganizations];
}

async function organizationHistory(store: HistoryStore, organizationId: string): Promise<RecordedEvent[]> {
  return [...(await store.readStream(streams.organization(organizationId))).events];
}

function page(id: string, history: readonly RecordedEvent[], query: HistoryQuery): HistoryPage {
  const newest = query.order === 'newest';
  const ordered = [...history].sort((a, b) => (newest ? b.position - a.position : a.position - b.position));
  const cursor = query.cursor;
  const after = cursor === undefined ? ordered : ordered.filter((event) => (newest ? event.position < cursor : event.position > cursor));
  const more = after.length > query.limit;
  const points = after.slice(0, query.limit).map((event) => {
    const recordedAt = event.recordedAt.toISOString();
    const occurredAt = (event.metadata as { occurredAt?: unknown }).occurredAt;
    return { position: event.position, occurredAt: typeof occurredAt === 'string' ? occurredAt : recordedAt, recordedAt, type: event.type, streamId: event.streamId };
  });
  return { id, points, total: history.length, nextCursor: more ? points.at(-1)!.position : null };
}

/**
 * The log positions at which a user's or an organization's time-travel state may have changed, paged. The
 * streams are read whole, as time travel folds them whole for any point of them.
 */
export const timeTravelHistory = {
  user: async (store: HistoryStore, userId: string, query: HistoryQuery) => page(userId, await userHistory(store, userId), query),
  organization: async (store: HistoryStore, organizationId: string, query: HistoryQuery) => page(organizationId, await organizationHistory(store, organizationId), query),
};
