import { actorOf, auditIndexProjectionName, eventDefinitions, eventMetadataSchema, supersededEvents, type AuditEvent, type AuditFilter } from '@portcullis/contracts';
import { sql, type CommonQueryMethods, type PersonalData } from '@portcullis/platform';
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

/**
 * Every type the audit index can hold: the projector indexes only events this code can read (the current
 * versions and the ones they superseded), so a type prefix is expanded over these.
 */
const knownTypes: readonly string[] = [...new Set([...eventDefinitions, ...supersededEvents].map((d) => d.type))].sort();

/** The exact types a filter asks for, or null for any: `type` (a list), narrowed by `typePrefix`. */
function typesOf(filter: AuditFilter): string[] | null {
  let types = filter.type ? filter.type.split(',').map((t) => t.trim()).filter((t) => t !== '') : null;
  if (filter.typePrefix) {
    const prefix = filter.typePrefix;
    types = (types ?? knownTypes).filter((t) => t.startsWith(prefix));
  }
  return types;
}

/**
 * The positions of one page of matching events, driven by the most selective index the filter allows: the
 * subject index (user, organization) when one is named, the (type, position) index for each type asked
 * for, else the audit index by position. Each is read in position order and stops at `limit` rows, so a
 * page costs the page, not the log. Several types are one ordered read each, merged: a single index scan
 * over `type = ANY(...)` would have to fetch and sort every event of those types.
 */
function pageQuery(filter: AuditFilter, limit: number): Fragment {
  const types = typesOf(filter);
  if (types !== null && types.length === 0) return sql.fragment`SELECT NULL::bigint AS position WHERE false`;
  // A user, organization, actor or stream drives the read by its own index in position order; the types
  // are then a condition on what it reads. Without one, each type is its own ordered read, merged.
  const driven = Boolean(filter.user || filter.organization || filter.actor || filter.stream);
  if (types !== null && types.length > 1 && !driven) {
    const newest = filter.order === 'newest';
    const parts = types.map((type) => sql.fragment`(${pageOfTypes(filter, [type], limit)})`);
    return sql.fragment`
      SELECT position FROM (${sql.join(parts, sql.fragment` UNION ALL `)}) merged
      ORDER BY position ${newest ? sql.fragment`DESC` : sql.fragment`ASC`} LIMIT ${limit}`;
  }
  return pageOfTypes(filter, types, limit);
}

function pageOfTypes(filter: AuditFilter, types: readonly string[] | null, limit: number): Fragment {
  const conditions: Fragment[] = [];
  const subjects: string[] = [];
  if (filter.user) subjects.push(`user:${filter.user}`);
  if (filter.organization) subjects.push(`organization:${filter.organization}`);
  // An actor is among the subjects of what they did (as acting user or as impersonator): their subject
  // drives the read when nothing else does, and the condition keeps what they did from what they underwent.
  if (filter.actor && subjects.length === 0) subjects.push(`user:${filter.actor}`);
  const [driving, ...others] = subjects;
  for (const subject of others) {
    conditions.push(sql.fragment`EXISTS (SELECT 1 FROM audit_event_subject o WHERE o.subject = ${subject} AND o.position = a.position)`);
  }
  if (filter.actor) conditions.push(sql.fragment`(a.actor_id = ${filter.actor} OR a.impersonator_id = ${filter.actor})`);
  if (filter.actorKind) conditions.push(sql.fragment`a.actor_kind = ${filter.actorKind}`);
  if (filter.ip) conditions.push(sql.fragment`a.ip <<= ${filter.ip}::inet`);
  if (types?.length === 1) conditions.push(sql.fragment`a.type = ${types[0]!}`);
  else if (types) conditions.push(sql.fragment`a.type = ANY(${sql.array([...types], 'text')})`);
  if (filter.stream) conditions.push(sql.fragment`a.stream_id = ${filter.stream}`);
  // Recorded times rise with positions, so a time range is a range of positions, found at its two ends on
  // the time index: the page is then read in position order from the right place, however far back.
  if (filter.from) {
    conditions.push(sql.fragment`a.recorded_at >= ${filter.from}::timestamptz`);
    conditions.push(sql.fragment`a.position >= coalesce((SELECT t.position FROM audit_event t WHERE t.recorded_at >= ${filter.from}::timestamptz
      ORDER BY t.recorded_at, t.position LIMIT 1), 9223372036854775807)`);
  }
  if (filter.to) {
    conditions.push(sql.fragment`a.recorded_at < ${filter.to}::timestamptz`);
    conditions.push(sql.fragment`a.position <= coalesce((SELECT t.position FROM audit_event t WHERE t.recorded_at < ${filter.to}::timestamptz
      ORDER BY t.recorded_at DESC, t.position DESC LIMIT 1), 0)`);
  }
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
  if (narrowAddressRange(filter)) {
    // Its own index first, then the sort: walking the log back from the head until enough events of a narrow
    // range turn up (the planner's choice for ORDER BY position LIMIT) reads most of the log for a range
    // weeks back. OFFSET 0 keeps the planner from folding the two steps into that walk.
    return sql.fragment`
      SELECT position FROM (SELECT a.position FROM audit_event a WHERE ${where} OFFSET 0) narrowed
      ORDER BY position ${direction} LIMIT ${limit}`;
  }
  return sql.fragment`SELECT a.position FROM audit_event a WHERE ${where} ORDER BY a.position ${direction} LIMIT ${limit}`;
}

/** An address range this small (or one address) holds few enough events to read them all and sort. */
const NARROW_PREFIX = { 4: 16, 6: 48 } as const;

function narrowAddressRange(filter: AuditFilter): boolean {
  if (!filter.ip) return false;
  const [address = '', bits] = filter.ip.split('/');
  const family = address.includes(':') ? 6 : 4;
  return bits === undefined || Number(bits) >= NARROW_PREFIX[family];
}

export interface AuditPage {
  readonly events: AuditEvent[];
  readonly nextCursor: number | null;
}

/**
 * One page of the audit trail, each event with its metadata, hash and sentence. Personal data is opened
 * with its subject's key, so an erased user's shows as erased (the hash is still over the ciphertext).
 */
export async function searchAudit(db: CommonQueryMethods, personalData: PersonalData, asked: AuditFilter, limit: number): Promise<AuditPage> {
  // An address's reservation or sign-in stream is stored under its keyed name; the operator may name either.
  const filter = asked.stream ? { ...asked, stream: personalData.storedStreamId(asked.stream) } : asked;
  const direction = filter.order === 'newest' ? sql.fragment`DESC` : sql.fragment`ASC`;
  const stored = (await db.any(sql.unsafe`
    SELECT e.position::text AS position, e.event_id, e.stream_id, e.stream_version, e.type, e.data, e.metadata,
           e.recorded_at, encode(e.hash, 'hex') AS hash
    FROM (${pageQuery(filter, limit + 1)}) page JOIN events e ON e.position = page.position
    ORDER BY e.position ${direction}`)) as readonly EventRow[];
  const rows = await personalData.decode(stored.map((row) => ({ ...row, metadata: eventMetadataSchema.parse(row.metadata) })));
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const parsed = shown.map((row) => {
    const metadata = row.metadata;
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
