import { actorOf, auditIndexProjectionName, eventMetadataSchema, type AuditEvent, type AuditFilter } from '@portcullis/contracts';
import { sql, type CommonQueryMethods } from '@portcullis/platform';
import { auditSentence, redactedData, usersNamed } from './audit-sentence.ts';

type Fragment = ReturnType<typeof sql.fragment>;

interface EventRow {
  readonly position: string;
  readonly event_id: string;
  readonly stream_id: string;
  readonly stream_version: number;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: unknown;
  readonly recorded_at: number;
  readonly hash: string;
}

/** `like` pattern characters in a prefix taken literally. */
function literalPrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The positions of one page of matching events, driven by the most selective index the filter allows: the
 * subject index (user, organization) when one is named, else the audit index by position. Every filter is
 * an index-backed condition; the page ends at `limit` rows, so its cost is the page, not the log.
 */
function pageQuery(filter: AuditFilter, limit: number): Fragment {
  const conditions: Fragment[] = [];
  const subjects: string[] = [];
  if (filter.user) subjects.push(`user:${filter.user}`);
  if (filter.organization) subjects.push(`organization:${filter.organization}`);
  const [driving, ...others] = subjects;
  for (const subject of others) {
    conditions.push(sql.fragment`EXISTS (SELECT 1 FROM audit_event_subject o WHERE o.subject = ${subject} AND o.position = a.position)`);
  }
  if (filter.actor) conditions.push(sql.fragment`a.actor_id = ${filter.actor}`);
  if (filter.actorKind) conditions.push(sql.fragment`a.actor_kind = ${filter.actorKind}`);
  if (filter.ip) conditions.push(sql.fragment`a.ip <<= ${filter.ip}::inet`);
  if (filter.type) {
    const types = filter.type.split(',').map((t) => t.trim()).filter((t) => t !== '');
    conditions.push(sql.fragment`a.type = ANY(${sql.array(types, 'text')})`);
  }
  if (filter.typePrefix) conditions.push(sql.fragment`a.type LIKE ${literalPrefix(filter.typePrefix)}`);
  if (filter.stream) conditions.push(sql.fragment`a.stream_id = ${filter.stream}`);
  if (filter.from) conditions.push(sql.fragment`a.occurred_at >= ${filter.from}::timestamptz`);
  if (filter.to) conditions.push(sql.fragment`a.occurred_at < ${filter.to}::timestamptz`);
  const newest = filter.order === 'newest';
  if (filter.cursor !== undefined) {
    conditions.push(newest ? sql.fragment`a.position < ${filter.cursor}` : sql.fragment`a.position > ${filter.cursor}`);
  }
  const where = conditions.length > 0 ? sql.join(conditions, sql.fragment` AND `) : sql.fragment`true`;
  const direction = newest ? sql.fragment`DESC` : sql.fragment`ASC`;
  if (driving) {
    return sql.fragment`
      SELECT a.position FROM audit_event_subject s JOIN audit_event a ON a.position = s.position
      WHERE s.subject = ${driving} AND ${where} ORDER BY s.position ${direction} LIMIT ${limit}`;
  }
  return sql.fragment`SELECT a.position FROM audit_event a WHERE ${where} ORDER BY a.position ${direction} LIMIT ${limit}`;
}

export interface AuditPage {
  readonly events: AuditEvent[];
  readonly nextCursor: number | null;
}

/** One page of the audit trail, each event with its metadata, hash and sentence. */
export async function searchAudit(db: CommonQueryMethods, filter: AuditFilter, limit: number): Promise<AuditPage> {
  const direction = filter.order === 'newest' ? sql.fragment`DESC` : sql.fragment`ASC`;
  const rows = (await db.any(sql.unsafe`
    SELECT e.position::text AS position, e.event_id, e.stream_id, e.stream_version, e.type, e.data, e.metadata,
           e.recorded_at, encode(e.hash, 'hex') AS hash
    FROM (${pageQuery(filter, limit + 1)}) page JOIN events e ON e.position = page.position
    ORDER BY e.position ${direction}`)) as readonly EventRow[];
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const parsed = shown.map((row) => {
    const metadata = eventMetadataSchema.parse(row.metadata);
    const data = redactedData(row.data);
    return { row, metadata, data, actor: actorOf(metadata) };
  });
  const ids = [...new Set(parsed.flatMap(({ row, data, actor, metadata }) => usersNamed({ type: row.type, data, actor, ipAddress: metadata.ipAddress })))];
  const labels = new Map<string, string>();
  if (ids.length > 0) {
    const users = (await db.any(sql.unsafe`SELECT id, email FROM "user" WHERE id = ANY(${sql.array(ids, 'text')})`)) as readonly { id: string; email: string }[];
    for (const u of users) labels.set(u.id, u.email);
  }
  const events = parsed.map(({ row, metadata, data, actor }): AuditEvent => ({
    position: Number(row.position),
    eventId: row.event_id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    occurredAt: metadata.occurredAt,
    recordedAt: new Date(row.recorded_at).toISOString(),
    actor,
    data,
    metadata,
    hash: row.hash,
    sentence: auditSentence({ type: row.type, data, actor, ipAddress: metadata.ipAddress }, labels),
  }));
  return { events, nextCursor: more ? events.at(-1)!.position : null };
}

/** How far the audit index has applied the log. */
export async function auditIndexedTo(db: CommonQueryMethods): Promise<number> {
  const position = await db.maybeOneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${auditIndexProjectionName}`);
  return Number(position ?? 0);
}
