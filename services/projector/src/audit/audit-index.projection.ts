import { isIP } from 'node:net';
import { actorOf, auditIndexProjectionName, eventDefinitions, storedTypesReadingAs, type EventActor } from '@portcullis/contracts';
import { auditAddressesErasure, sql, type PostgresProjection, type ProjectedEvent, type ProjectionSql } from '@portcullis/platform';

/** Fields of event data that name a user the event concerns (beside its actor). */
const USER_FIELDS = ['userId', 'inviterId', 'createdByUserId', 'byUserId'] as const;

/**
 * Whom an event concerns, as the index keys it: `user:<id>` for each user its data names and for its actor
 * (and the admin behind an impersonation), `organization:<id>` for the organization it belongs to.
 */
function auditSubjectsOf({ event, recorded }: ProjectedEvent, actor: EventActor = actorOf(recorded.metadata)): string[] {
  const subjects = new Set<string>();
  const data = event.data as Record<string, unknown>;
  for (const field of USER_FIELDS) {
    const value = data[field];
    if (typeof value === 'string' && value !== '') subjects.add(`user:${value}`);
  }
  if (actor.id) subjects.add(`user:${actor.id}`);
  if (actor.impersonatorId) subjects.add(`user:${actor.impersonatorId}`);
  if (typeof data.organizationId === 'string' && data.organizationId !== '') subjects.add(`organization:${data.organizationId}`);
  return [...subjects];
}

/** `data.userId` as the index keeps it: as Postgres's `data->>'userId'` reads it (a string as is), null when absent. */
function userIdOf(data: Record<string, unknown>): string | null {
  const value = data.userId;
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

async function insertAll(tx: ProjectionSql, events: readonly ProjectedEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows: object[] = [];
  const subjects: Array<{ s: string; p: number }> = [];
  for (const projected of events) {
    const { recorded } = projected;
    const actor = actorOf(recorded.metadata);
    const ip = recorded.metadata.ipAddress ?? null;
    rows.push({
      p: recorded.position,
      t: recorded.type,
      s: recorded.streamId,
      r: recorded.recordedAt.toISOString(),
      k: actor.kind,
      a: actor.id,
      m: actor.impersonatorId ?? null,
      u: userIdOf(projected.event.data),
      o: recorded.metadata.occurredAt,
      // Only an address Postgres will take: a value it refuses would stop the projection for good.
      i: ip !== null && isIP(ip) !== 0 ? ip : null,
    });
    for (const subject of auditSubjectsOf(projected, actor)) subjects.push({ s: subject, p: recorded.position });
  }
  // The rows as one JSON text each statement: a replay's batch is tens of thousands of them, and one
  // document is cheaper to write and for Postgres to read than a text array per column.
  await tx.query(sql.unsafe`
    INSERT INTO audit_event (position, type, stream_id, recorded_at, actor_kind, actor_id, impersonator_id, ip, user_id, occurred_at)
    SELECT p, t, s, r, k, a, m, i, u, o FROM json_to_recordset(${JSON.stringify(rows)}::json)
      AS e(p int8, t text, s text, r timestamptz, k text, a text, m text, i inet, u text, o timestamptz)
    ON CONFLICT DO NOTHING`);
  if (subjects.length > 0) {
    await tx.query(sql.unsafe`
      INSERT INTO audit_event_subject (subject, position)
      SELECT s, p FROM json_to_recordset(${JSON.stringify(subjects)}::json) AS e(s text, p int8)
      ON CONFLICT DO NOTHING`);
  }
  // A deleted user's client addresses go from the index with their key (issue 25), here as well as in the
  // api's erasure: this index may have read the deletion's own events, or earlier ones, before the key went.
  for (const { event } of events) {
    if (event.type !== 'user.deleted.v1') continue;
    await tx.query(auditAddressesErasure(sql.array([event.data.userId], 'text')));
  }
}

/** Every type this reader knows as stored (older versions too): a type it does not know is skipped, as live. */
const knownStoredTypes = storedTypesReadingAs(new Set(eventDefinitions.map((definition) => definition.type)));

/** A field of `data`, read as a jsonb column of its name, as a subject, or null: `auditSubjectsOf`'s rule, a non-empty string. */
function subjectSql(prefix: 'user' | 'organization', field: string) {
  const value = sql.identifier([field]);
  return sql.fragment`CASE WHEN jsonb_typeof(${value}) = 'string' AND ${value} <> '""' THEN ${`${prefix}:`}::text || (${value} #>> '{}') END`;
}

const dataColumns = sql.join([...USER_FIELDS, 'organizationId'].map((field) => sql.fragment`${sql.identifier([field])} jsonb`), sql.fragment`, `);
const dataSubjects = sql.join([...USER_FIELDS.map((field) => subjectSql('user', field)), subjectSql('organization', 'organizationId')], sql.fragment`, `);

/**
 * A replay's batch in one statement: Postgres reads the batch's events from the log's table and makes their
 * rows itself, so this process parses of each event only its client address (sealed: it opens only here).
 * The actor is `actorOf` read in SQL, the subjects `auditSubjectsOf`; the rebuild spec holds the two ways to
 * the same rows, for every shape of actor. Each event's data and metadata are taken apart once
 * (`jsonb_to_record`), not once a field.
 */
async function replayAll(tx: ProjectionSql, events: readonly ProjectedEvent[], range: { readonly after: number; readonly until: number }): Promise<void> {
  const addresses: Array<{ p: number; i: string | null; blank?: true }> = [];
  let deletions = false;
  for (const { event, recorded } of events) {
    if (event.type === 'user.deleted.v1') deletions = true;
    const ip = recorded.metadata.ipAddress;
    if (typeof ip !== 'string') continue;
    // An address that opens as '' is no address to `actorOf` (stored sealed, it is text to Postgres).
    if (ip === '') addresses.push({ p: recorded.position, i: null, blank: true });
    else if (isIP(ip) !== 0) addresses.push({ p: recorded.position, i: ip });
  }
  await tx.query(sql.unsafe`
    WITH batch AS (
      SELECT position, type, stream_id, recorded_at, ip, kind, id, impersonator_id, user_id, occurred_at,
        array_remove(ARRAY[${dataSubjects},
          CASE WHEN id <> '' THEN 'user:' || id END,
          CASE WHEN impersonator_id <> '' THEN 'user:' || impersonator_id END], NULL) AS subjects
      FROM (
        SELECT position, type, stream_id, recorded_at, ip, data_subjects.*, impersonator_id, "userId" #>> '{}' AS user_id, occurred_at,
          CASE
            -- Whatever came through an impersonation session is the impersonator's, whatever kind it was stored as.
            WHEN impersonator_id IS NOT NULL THEN 'impersonator'
            WHEN jsonb_typeof(actor) = 'object' THEN actor->>'kind'
            WHEN "actorId" <> '' THEN 'user'
            WHEN "requestId" <> '' OR ("ipAddress" <> '' AND blank IS NULL) THEN 'anonymous'
            ELSE 'system'
          END AS kind,
          CASE
            WHEN jsonb_typeof(actor) = 'object' THEN actor->>'id'
            WHEN impersonator_id IS NOT NULL OR "actorId" <> '' THEN "actorId"
          END AS id
        FROM (
          -- To the millisecond, as the live projection has it (from the instant this process reads).
          SELECT e.position, e.type, e.stream_id, date_trunc('milliseconds', e.recorded_at) AS recorded_at, o.i AS ip, o.blank,
            m.actor, m."actorId", m."requestId", m."ipAddress", m."occurredAt"::timestamptz AS occurred_at, e.data,
            coalesce(nullif(m.actor->>'impersonatorId', ''), nullif(m."impersonatedBy", '')) AS impersonator_id
          FROM events e
          LEFT JOIN json_to_recordset(${JSON.stringify(addresses)}::json) AS o(p int8, i inet, blank bool) ON o.p = e.position
          CROSS JOIN LATERAL jsonb_to_record(e.metadata) AS m(actor jsonb, "actorId" text, "impersonatedBy" text, "requestId" text, "ipAddress" text, "occurredAt" text)
          WHERE e.position > ${range.after} AND e.position <= ${range.until} AND e.type = ANY(${sql.array(knownStoredTypes, 'text')})
        ) AS events_read
        CROSS JOIN LATERAL jsonb_to_record(events_read.data) AS data_subjects(${dataColumns})
      ) AS actors
    ),
    indexed AS (
      INSERT INTO audit_event (position, type, stream_id, recorded_at, actor_kind, actor_id, impersonator_id, ip, user_id, occurred_at)
      SELECT position, type, stream_id, recorded_at, kind, id, impersonator_id, ip, user_id, occurred_at FROM batch
      ON CONFLICT DO NOTHING
    )
    INSERT INTO audit_event_subject (subject, position)
    SELECT DISTINCT subject, position FROM batch, unnest(subjects) AS subject
    ON CONFLICT DO NOTHING`);
  if (deletions) {
    await tx.query(
      auditAddressesErasure(sql.fragment`ARRAY(
        SELECT data->>'userId' FROM events WHERE type = 'user.deleted.v1' AND position > ${range.after} AND position <= ${range.until})`),
    );
  }
}

/** What the live projection reads of an event beyond its envelope: `auditSubjectsOf`'s ids and `actorOf`'s fields. */
const PORT_READS = { data: [...USER_FIELDS, 'organizationId'], metadata: ['actor', 'actorId', 'impersonatedBy', 'requestId', 'ipAddress'] } as const;

/**
 * The audit index (`audit_event`, `audit_event_subject`): every event of the log, keyed by what the audit
 * search filters on. Built from every event type: a batch is two multi-row INSERTs, live and in a replay,
 * which reads through the port only the few fields the rows are made of. This is the index of a log in
 * another store than the read models (KurrentDB); on a log in their database, `auditIndexProjection`.
 */
export const auditIndexProjectionThroughPort: PostgresProjection = {
  name: auditIndexProjectionName,
  // Audit search may trail the log this long; in return a busy log costs it one transaction per interval,
  // not one per request (it indexes every event: each sign-in's would otherwise be a transaction of its own).
  gatherMs: 200,
  // A few ids of each event and who acted from where: a replay reads (and decrypts) nothing else.
  reads: PORT_READS,
  tables: ['audit_event', 'audit_event_subject'],
  // It only ever inserts, so a rebuild loads bare tables and indexes them once.
  indexesAfterLoad: [
    'audit_event_pkey',
    'audit_event_type',
    'audit_event_stream',
    'audit_event_actor',
    'audit_event_impersonator',
    'audit_event_recorded',
    'audit_event_ip',
    'audit_event_subject_pkey',
  ],
  async apply(tx, projected) {
    await insertAll(tx, [projected]);
  },
  async applyAll(tx, events) {
    await insertAll(tx, events);
  },
};

/**
 * The audit index of a log in the read models' own database (Postgres): live as above, but a replay's batch
 * is one statement that makes the rows in Postgres from the log's table (see `replayAll`), a quarter faster
 * on a million events than making them here. That table is the log only there: on any other store the
 * replay reads through the port (`auditIndexProjectionFor`).
 */
export const auditIndexProjection: PostgresProjection = {
  ...auditIndexProjectionThroughPort,
  // A replay reads here only each event's client address, the one value Postgres cannot open.
  replay: { reads: { data: [], metadata: ['ipAddress'] }, applyAll: replayAll },
};

/** The audit index for where the log is: in the read models' database (no EVENTSTORE_URL), or elsewhere. */
export function auditIndexProjectionFor(log: { readonly eventStoreUrl: string | null }): PostgresProjection {
  return log.eventStoreUrl === null ? auditIndexProjection : auditIndexProjectionThroughPort;
}
