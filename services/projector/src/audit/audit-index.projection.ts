import { isIP } from 'node:net';
import { actorMetadataFields, actorOf, auditIndexProjectionName, type EventActor } from '@portcullis/contracts';
import { sql, type PostgresProjection, type ProjectedEvent, type ProjectionSql } from '@portcullis/platform';

/** Fields of event data that name a user the event concerns (beside its actor). */
const USER_FIELDS = ['userId', 'inviterId', 'createdByUserId', 'byUserId'] as const;

/**
 * Whom an event concerns, as the index keys it: `user:<id>` for each user its data names and for its actor
 * (and the admin behind an impersonation), `organization:<id>` for the organization it belongs to.
 */
export function auditSubjectsOf({ event, recorded }: ProjectedEvent, actor: EventActor = actorOf(recorded.metadata)): string[] {
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
      // Only an address Postgres will take: a value it refuses would stop the projection for good.
      i: ip !== null && isIP(ip) !== 0 ? ip : null,
    });
    for (const subject of auditSubjectsOf(projected, actor)) subjects.push({ s: subject, p: recorded.position });
  }
  // The rows as one JSON text each statement: a replay's batch is tens of thousands of them, and one
  // document is cheaper to write and for Postgres to read than a text array per column.
  await tx.query(sql.unsafe`
    INSERT INTO audit_event (position, type, stream_id, recorded_at, actor_kind, actor_id, ip)
    SELECT p, t, s, r, k, a, i FROM json_to_recordset(${JSON.stringify(rows)}::json)
      AS e(p int8, t text, s text, r timestamptz, k text, a text, i inet)
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
    const userId = event.data.userId;
    await tx.query(sql.unsafe`
      UPDATE audit_event SET ip = NULL
      WHERE ip IS NOT NULL AND (actor_id = ${userId} OR (actor_id IS NULL AND position IN (
        SELECT position FROM audit_event_subject WHERE subject = ${`user:${userId}`})))`);
  }
}

/**
 * The audit index (`audit_event`, `audit_event_subject`): every event of the log, keyed by what the audit
 * search filters on. Built from every event type; a batch is two multi-row INSERTs, so a replay of the
 * whole log goes at the speed of Postgres writing rows.
 */
export const auditIndexProjection: PostgresProjection = {
  name: auditIndexProjectionName,
  // Audit search may trail the log this long; in return a busy log costs it one transaction per interval,
  // not one per request (it indexes every event: each sign-in's would otherwise be a transaction of its own).
  gatherMs: 200,
  // A few ids of each event and who acted from where: a replay reads (and decrypts) nothing else.
  reads: { data: [...USER_FIELDS, 'organizationId'], metadata: actorMetadataFields },
  tables: ['audit_event', 'audit_event_subject'],
  // It only ever inserts, so a rebuild loads bare tables and indexes them once.
  indexesAfterLoad: [
    'audit_event_pkey',
    'audit_event_type',
    'audit_event_stream',
    'audit_event_actor',
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
