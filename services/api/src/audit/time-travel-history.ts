import { streams } from '@portcullis/contracts';
import { sql, type CommonQueryMethods } from '@portcullis/platform';

type Fragment = ReturnType<typeof sql.fragment>;

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

/** What an organization event must be to change the name a member's state shows, beside naming the member. */
const RENAMING_TYPES = ['organization.created.v1', 'organization.updated.v1', 'organization.deleted.v1'];

/**
 * The events of a user's history that time travel folds: every event of the user's own streams (profile,
 * account, ban and role; sessions; organization index), and of each organization they ever joined, those
 * that name them (joined, role changed, left) or rename or delete it. Read from the log itself, not the
 * audit index, so the slider never lacks an event the state already shows.
 */
function userHistory(userId: string): Fragment {
  const own = sql.array([streams.user(userId), streams.userSessions(userId), streams.userOrganizations(userId)], 'text');
  return sql.fragment`
    SELECT e.position, e.type, e.stream_id, e.recorded_at, e.metadata->>'occurredAt' AS occurred_at FROM events e
    WHERE e.stream_id = ANY(${own})
    UNION ALL
    SELECT e.position, e.type, e.stream_id, e.recorded_at, e.metadata->>'occurredAt' AS occurred_at FROM events e
    WHERE e.stream_id IN (
        SELECT DISTINCT 'organization-' || (j.data->>'organizationId') FROM events j
        WHERE j.stream_id = ${streams.userOrganizations(userId)} AND j.data->>'organizationId' IS NOT NULL)
      AND (e.data->>'userId' = ${userId} OR e.type = ANY(${sql.array(RENAMING_TYPES, 'text')}))`;
}

function organizationHistory(organizationId: string): Fragment {
  return sql.fragment`
    SELECT e.position, e.type, e.stream_id, e.recorded_at, e.metadata->>'occurredAt' AS occurred_at FROM events e
    WHERE e.stream_id = ${streams.organization(organizationId)}`;
}

async function page(db: CommonQueryMethods, id: string, history: Fragment, query: HistoryQuery): Promise<HistoryPage> {
  const newest = query.order === 'newest';
  const after = query.cursor === undefined ? sql.fragment`true` : newest ? sql.fragment`h.position < ${query.cursor}` : sql.fragment`h.position > ${query.cursor}`;
  const [rows, total] = await Promise.all([
    db.any(sql.unsafe`
      SELECT h.position::text AS position, h.type, h.stream_id, h.recorded_at, h.occurred_at FROM (${history}) h WHERE ${after}
      ORDER BY h.position ${newest ? sql.fragment`DESC` : sql.fragment`ASC`} LIMIT ${query.limit + 1}`) as Promise<
      readonly { position: string; type: string; stream_id: string; recorded_at: number; occurred_at: string | null }[]
    >,
    db.oneFirst(sql.unsafe`SELECT count(*)::int FROM (${history}) h`) as Promise<number>,
  ]);
  const more = rows.length > query.limit;
  const points = (more ? rows.slice(0, query.limit) : rows).map((row) => {
    const recordedAt = new Date(row.recorded_at).toISOString();
    return { position: Number(row.position), occurredAt: row.occurred_at ?? recordedAt, recordedAt, type: row.type, streamId: row.stream_id };
  });
  return { id, points, total, nextCursor: more ? points.at(-1)!.position : null };
}

/** The log positions at which a user's or an organization's time-travel state may have changed, paged. */
export const timeTravelHistory = {
  user: (db: CommonQueryMethods, userId: string, query: HistoryQuery) => page(db, userId, userHistory(userId), query),
  organization: (db: CommonQueryMethods, organizationId: string, query: HistoryQuery) => page(db, organizationId, organizationHistory(organizationId), query),
};
