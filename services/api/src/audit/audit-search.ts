import { actorOf, auditIndexProjectionName, eventDefinitions, eventMetadataSchema, supersededEvents, type AuditEvent, type AuditFilter, type AuditNames } from '@portcullis/contracts';
import { sql, type CommonQueryMethods, type EventStore, type LogChain, type PersonalData, type RecordedEvent } from '@portcullis/platform';
import { auditSentence, redactedData, usersNamed } from './audit-sentence.ts';
import { MentionedIds, namesOf } from './audit-names.ts';

type Fragment = ReturnType<typeof sql.fragment>;

/**
 * What the audit trail reads: the log (through the port, personal data opened as `ProtectedEventStore`
 * opens it), its chain's hashes, the audit index and read models in `db`, and the keys' state.
 */
export interface AuditReads {
  readonly db: CommonQueryMethods;
  readonly store: Pick<EventStore, 'eventsAt' | 'readStreams'>;
  readonly chain: Pick<LogChain, 'hashesAt'>;
  readonly personalData: PersonalData;
}

/**
 * Every type the audit index can hold: the projector indexes only events this code can read (the current
 * versions and the ones they superseded), so a type prefix is expanded over these.
 */
export const knownTypes: readonly string[] = [...new Set([...eventDefinitions, ...supersededEvents].map((d) => d.type))].sort();

/** A filter with each list filter as a list (empty: not asked), the stream ids as stored. */
interface Criteria {
  readonly users: readonly string[];
  readonly organizations: readonly string[];
  readonly actors: readonly string[];
  readonly actorKinds: readonly string[];
  readonly ips: readonly string[];
  readonly streams: readonly string[];
  /** The exact types asked for, or null for any. */
  readonly types: readonly string[] | null;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly newest: boolean;
  readonly cursor?: number | undefined;
}

function listed<T>(value: T | readonly T[] | undefined): T[] {
  if (value === undefined) return [];
  return [...new Set(Array.isArray(value) ? (value as readonly T[]) : [value as T])];
}

/** The exact types a filter asks for, or null for any: `type` (a list), narrowed by `typePrefix`. */
function typesOf(filter: AuditFilter): string[] | null {
  let types = filter.type ? filter.type.split(',').map((t) => t.trim()).filter((t) => t !== '') : null;
  if (filter.typePrefix) {
    const prefix = filter.typePrefix;
    types = (types ?? knownTypes).filter((t) => t.startsWith(prefix));
  }
  return types;
}

function criteriaOf(filter: AuditFilter, storedStreamId: (streamId: string) => string): Criteria {
  return {
    users: listed(filter.user),
    organizations: listed(filter.organization),
    actors: listed(filter.actor),
    actorKinds: listed(filter.actorKind),
    ips: listed(filter.ip),
    // An address's reservation or sign-in stream is stored under its keyed name; the operator may name either.
    streams: listed(filter.stream).map(storedStreamId),
    types: typesOf(filter),
    from: filter.from,
    to: filter.to,
    newest: filter.order !== 'oldest',
    cursor: filter.cursor,
  };
}

/**
 * The read that drives a page: the subjects of one subject filter (users, else organizations, else actors,
 * since an actor is among the subjects of what they did), else the streams, else the types. Each value of
 * it is one ordered read of its own index, stopped at the page's length; several are merged.
 */
type Driver = { kind: 'subject'; source: 'users' | 'organizations' | 'actors'; values: string[] } | { kind: 'stream'; values: readonly string[] } | { kind: 'type'; values: readonly string[] } | { kind: 'none' };

function driverOf(c: Criteria): Driver {
  if (c.users.length > 0) return { kind: 'subject', source: 'users', values: c.users.map((id) => `user:${id}`) };
  if (c.organizations.length > 0) return { kind: 'subject', source: 'organizations', values: c.organizations.map((id) => `organization:${id}`) };
  if (c.actors.length > 0) return { kind: 'subject', source: 'actors', values: c.actors.map((id) => `user:${id}`) };
  if (c.streams.length > 0) return { kind: 'stream', values: c.streams };
  if (c.types !== null && c.types.length > 1) return { kind: 'type', values: c.types };
  return { kind: 'none' };
}

/**
 * The positions of one page of matching events, driven by the most selective index the filter allows (see
 * `driverOf`). Each read is in position order and stops at `limit` rows, so a page costs the page, not the
 * log. Several values are one ordered read each, merged: a single index scan over `= ANY(...)` would have
 * to fetch and sort every event of those values.
 */
function pageQuery(c: Criteria, limit: number): Fragment {
  if (c.types !== null && c.types.length === 0) return sql.fragment`SELECT NULL::bigint AS position WHERE false`;
  const driver = driverOf(c);
  const direction = c.newest ? sql.fragment`DESC` : sql.fragment`ASC`;
  const values: readonly (string | null)[] = driver.kind === 'none' ? [null] : driver.values;
  if (values.length === 1) return readOf(c, driver, values[0]!, limit);
  const parts = values.map((value) => sql.fragment`(${readOf(c, driver, value, limit)})`);
  // UNION, not UNION ALL: an event may concern two of the users asked for.
  return sql.fragment`
    SELECT position FROM (${sql.join(parts, sql.fragment` UNION `)}) merged
    ORDER BY position ${direction} LIMIT ${limit}`;
}

/** One ordered read: the events of one driving value (or of none) that meet every other condition. */
function readOf(c: Criteria, driver: Driver, value: string | null, limit: number): Fragment {
  const conditions = conditionsOf(c, driver);
  if (driver.kind === 'stream') conditions.push(sql.fragment`a.stream_id = ${value}`);
  if (driver.kind === 'type') conditions.push(sql.fragment`a.type = ${value}`);
  const where = conditions.length > 0 ? sql.join(conditions, sql.fragment` AND `) : sql.fragment`true`;
  const direction = c.newest ? sql.fragment`DESC` : sql.fragment`ASC`;
  if (driver.kind === 'subject') {
    return sql.fragment`
      SELECT a.position FROM audit_event_subject s JOIN audit_event a ON a.position = s.position
      WHERE s.subject = ${value} AND ${where} ORDER BY s.position ${direction} LIMIT ${limit}`;
  }
  if (narrowAddressRanges(c.ips)) {
    // Its own index first, then the sort: walking the log back from the head until enough events of a narrow
    // range turn up (the planner's choice for ORDER BY position LIMIT) reads most of the log for a range
    // weeks back. OFFSET 0 keeps the planner from folding the two steps into that walk.
    return sql.fragment`
      SELECT position FROM (SELECT a.position FROM audit_event a WHERE ${where} OFFSET 0) narrowed
      ORDER BY position ${direction} LIMIT ${limit}`;
  }
  return sql.fragment`SELECT a.position FROM audit_event a WHERE ${where} ORDER BY a.position ${direction} LIMIT ${limit}`;
}

/** Every condition but the driving value's: a filter of several values is met by any of them. */
function conditionsOf(c: Criteria, driver: Driver): Fragment[] {
  const conditions: Fragment[] = [];
  const subjectFilters = [
    { source: 'users', subjects: c.users.map((id) => `user:${id}`) },
    { source: 'organizations', subjects: c.organizations.map((id) => `organization:${id}`) },
  ] as const;
  for (const { source, subjects } of subjectFilters) {
    if (subjects.length === 0 || (driver.kind === 'subject' && driver.source === source)) continue;
    conditions.push(sql.fragment`EXISTS (SELECT 1 FROM audit_event_subject o WHERE o.subject = ANY(${sql.array(subjects, 'text')}) AND o.position = a.position)`);
  }
  // The subject of what an actor did drives the read when nothing else does; this keeps what they did from what they underwent.
  if (c.actors.length > 0) {
    const actors = sql.array([...c.actors], 'text');
    conditions.push(sql.fragment`(a.actor_id = ANY(${actors}) OR a.impersonator_id = ANY(${actors}))`);
  }
  if (c.actorKinds.length > 0) conditions.push(sql.fragment`a.actor_kind = ANY(${sql.array([...c.actorKinds], 'text')})`);
  if (c.ips.length > 0) {
    conditions.push(sql.fragment`(${sql.join(c.ips.map((ip) => sql.fragment`a.ip <<= ${ip}::inet`), sql.fragment` OR `)})`);
  }
  if (driver.kind !== 'type' && c.types !== null) {
    conditions.push(c.types.length === 1 ? sql.fragment`a.type = ${c.types[0]!}` : sql.fragment`a.type = ANY(${sql.array([...c.types], 'text')})`);
  }
  if (driver.kind !== 'stream' && c.streams.length > 0) conditions.push(sql.fragment`a.stream_id = ANY(${sql.array([...c.streams], 'text')})`);
  // Recorded times rise with positions, so a time range is a range of positions, found at its two ends on
  // the time index: the page is then read in position order from the right place, however far back.
  if (c.from) {
    conditions.push(sql.fragment`a.recorded_at >= ${c.from}::timestamptz`);
    conditions.push(sql.fragment`a.position >= coalesce((SELECT t.position FROM audit_event t WHERE t.recorded_at >= ${c.from}::timestamptz
      ORDER BY t.recorded_at, t.position LIMIT 1), 9223372036854775807)`);
  }
  if (c.to) {
    conditions.push(sql.fragment`a.recorded_at < ${c.to}::timestamptz`);
    conditions.push(sql.fragment`a.position <= coalesce((SELECT t.position FROM audit_event t WHERE t.recorded_at < ${c.to}::timestamptz
      ORDER BY t.recorded_at DESC, t.position DESC LIMIT 1), 0)`);
  }
  if (c.cursor !== undefined) conditions.push(c.newest ? sql.fragment`a.position < ${c.cursor}` : sql.fragment`a.position > ${c.cursor}`);
  return conditions;
}

/** An address range this small (or one address) holds few enough events to read them all and sort. */
const NARROW_PREFIX = { 4: 16, 6: 48 } as const;

function narrowAddressRanges(ips: readonly string[]): boolean {
  if (ips.length === 0) return false;
  return ips.every((ip) => {
    const [address = '', bits] = ip.split('/');
    const family = address.includes(':') ? 6 : 4;
    return bits === undefined || Number(bits) >= NARROW_PREFIX[family];
  });
}

export interface AuditPage extends AuditNames {
  readonly events: AuditEvent[];
  readonly nextCursor: number | null;
}

/**
 * Events as the log holds them (opened: an erased user's personal data shows as erased; the hash, the
 * chain's, is still over the ciphertext), as the audit trail shows them: secrets redacted, each with its
 * sentence and its hash in the chain (null where the chain does not cover it yet), and the names of every
 * user and organization they mention. Stream ids are as stored (an address's keyed name).
 */
export async function shownEvents(
  reads: Pick<AuditReads, 'db' | 'store' | 'personalData'>,
  recorded: readonly RecordedEvent[],
  hashes: ReadonlyMap<number, string | null>,
): Promise<{ events: AuditEvent[]; names: AuditNames }> {
  const parsed = recorded.map((event) => {
    const metadata = eventMetadataSchema.parse(event.metadata);
    const data = redactedData(event.data);
    return { event, metadata, data, actor: actorOf(metadata) };
  });
  const mentioned = new MentionedIds();
  for (const { event, data, actor, metadata } of parsed) {
    for (const id of usersNamed({ type: event.type, data, actor, ipAddress: metadata.ipAddress })) mentioned.user(id);
    mentioned.within(data);
  }
  const names = await namesOf(reads, mentioned);
  const labels = new Map<string, string>();
  for (const [id, person] of Object.entries(names.people)) if (person !== 'erased') labels.set(id, person.email);
  const organizationLabels = new Map(Object.entries(names.organizations).map(([id, organization]) => [id, organization.name]));
  const events = parsed.map(({ event, metadata, data, actor }): AuditEvent => ({
    position: event.position,
    eventId: event.eventId,
    streamId: event.streamId,
    streamVersion: event.streamVersion,
    type: event.type,
    occurredAt: metadata.occurredAt,
    recordedAt: event.recordedAt.toISOString(),
    actor,
    data,
    metadata,
    hash: hashes.get(event.position) ?? null,
    sentence: auditSentence({ type: event.type, data, actor, ipAddress: metadata.ipAddress }, labels, organizationLabels),
  }));
  return { events, names };
}

/**
 * One page of the audit trail (see `shownEvents`), and the cursor of the next: its positions from the
 * index, then their events and hashes in one read each (one query each on Postgres).
 */
export async function searchAudit(reads: AuditReads, filter: AuditFilter, limit: number): Promise<AuditPage> {
  const criteria = criteriaOf(filter, (streamId) => reads.personalData.storedStreamId(streamId));
  const found = (await reads.db.anyFirst(sql.unsafe`${pageQuery(criteria, limit + 1)}`)) as readonly (string | number)[];
  const positions = found.map(Number);
  const more = positions.length > limit;
  const shown = more ? positions.slice(0, limit) : positions;
  const [recorded, hashes] = await Promise.all([reads.store.eventsAt(shown), reads.chain.hashesAt(shown)]);
  const ordered = criteria.newest ? [...recorded].reverse() : recorded;
  const { events, names } = await shownEvents(reads, ordered, hashes);
  return { events, nextCursor: more ? shown.at(-1)! : null, ...names };
}

/** How far the audit index has applied the log. */
export async function auditIndexedTo(db: CommonQueryMethods): Promise<number> {
  const position = await db.maybeOneFirst(sql.unsafe`SELECT position FROM projection_checkpoints WHERE name = ${auditIndexProjectionName}`);
  return Number(position ?? 0);
}
