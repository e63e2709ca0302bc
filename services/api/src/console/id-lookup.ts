import { DomainError, streams, type OpsLookupAnswer, type OpsLookupMatch } from '@portcullis/contracts';
import { sql, type RecordedEvent } from '@portcullis/platform';
import type { ConsolePorts } from './ports.ts';
import { refOf, userJoin, userRefColumns } from './user-ref.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A log position as a log line shows it; past this it is no bigint. */
const POSITION = /^\d{1,15}$/;

type Row = Readonly<Record<string, unknown>>;
type Finder = (ctx: ConsolePorts, id: string) => Promise<OpsLookupMatch[]>;

/** The first event of a stream, where the log has one: what names an object gone from the read models. */
async function streamOpening(ctx: ConsolePorts, streamId: string): Promise<{ readonly data: Row } | null> {
  const [opening] = (await ctx.store.readStream(streamId, { limit: 1 })).events;
  return opening ? { data: opening.data as Row } : null;
}

const findUser: Finder = async (ctx, id) => {
  const row = (await ctx.pool.maybeOne(sql.unsafe`SELECT id, name AS u_name, email AS u_email FROM "user" WHERE id = ${id}`)) as Row | null;
  if (row) return [{ kind: 'user', id, user: refOf(row, 'u', id) }];
  // A deleted user's id still names its history; its name and email went with it.
  return (await streamOpening(ctx, streams.user(id))) ? [{ kind: 'user', id, user: { id, name: null, email: null } }] : [];
};

const findSession: Finder = async (ctx, id) => {
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT s."userId", s.token, s."expiresAt", ${userRefColumns('u')}
    FROM session s ${userJoin('u', sql.fragment`s."userId"`)} WHERE s.id = ${id}`)) as (Row & { userId: string; token: string; expiresAt: number }) | null;
  const now = ctx.clock().getTime();
  if (row) {
    const live = row.expiresAt > now;
    return [{ kind: 'session', id, user: refOf(row, 'u', row.userId), live, tokenHash: live ? row.token : null }];
  }
  // An ended session has left the table: its stream still says whose it was.
  const opening = await streamOpening(ctx, streams.session(id));
  const userId = opening?.data.userId;
  if (typeof userId !== 'string') return [];
  const named = (await ctx.pool.maybeOne(sql.unsafe`SELECT name AS u_name, email AS u_email FROM "user" WHERE id = ${userId}`)) as Row | null;
  return [{ kind: 'session', id, user: refOf(named ?? {}, 'u', userId), live: false, tokenHash: null }];
};

const findOrganization: Finder = async (ctx, id) => {
  const row = (await ctx.pool.maybeOne(sql.unsafe`SELECT name, slug FROM organization WHERE id = ${id}`)) as { name: string; slug: string } | null;
  return row ? [{ kind: 'organization', id, name: row.name, slug: row.slug }] : [];
};

const findInvitation: Finder = async (ctx, id) => {
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT v."organizationId", o.name AS organization_name, v.email, v.status
    FROM invitation v LEFT JOIN organization o ON o.id = v."organizationId" WHERE v.id = ${id}`)) as
    | { organizationId: string; organization_name: string | null; email: string; status: string }
    | null;
  return row ? [{ kind: 'invitation', id, organizationId: row.organizationId, organizationName: row.organization_name, email: row.email, status: row.status }] : [];
};

const findTeam: Finder = async (ctx, id) => {
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT t.name, t."organizationId", o.name AS organization_name
    FROM team t LEFT JOIN organization o ON o.id = t."organizationId" WHERE t.id = ${id}`)) as { name: string; organizationId: string; organization_name: string | null } | null;
  return row ? [{ kind: 'team', id, name: row.name, organizationId: row.organizationId, organizationName: row.organization_name }] : [];
};

const findMailJob: Finder = async (ctx, id) => {
  if (!UUID.test(id)) return [];
  const row = (await ctx.pool.maybeOne(sql.unsafe`
    SELECT d.kind, d.status, d.user_id, ${userRefColumns('u')}
    FROM mail_delivery d ${userJoin('u', sql.fragment`d.user_id`)} WHERE d.job_id = ${id}::uuid`)) as (Row & { kind: string; status: string; user_id: string | null }) | null;
  if (!row) return [];
  return [{ kind: 'mail-job', id, mailKind: row.kind, status: row.status, user: row.user_id === null || row.user_id === '' ? null : refOf(row, 'u', row.user_id) }];
};

/** An event by its id or its position, through the port (the log may be on KurrentDB). */
const findEvent: Finder = async (ctx, id) => {
  const event = UUID.test(id) ? await ctx.store.eventById(id) : POSITION.test(id) ? await eventAt(ctx, Number(id)) : null;
  if (!event) return [];
  return [{ kind: 'event', id: event.eventId, position: event.position, streamId: event.streamId, type: event.type, recordedAt: event.recordedAt.toISOString() }];
};

async function eventAt(ctx: ConsolePorts, position: number): Promise<RecordedEvent | null> {
  if (position < 1) return null;
  const [event] = await ctx.store.readAll({ after: position - 1, limit: 1, fields: { data: [], metadata: [] } });
  return event?.position === position ? event : null;
}

const finders: readonly Finder[] = [findUser, findSession, findOrganization, findInvitation, findTeam, findMailJob, findEvent];

/**
 * What an id pasted from a log line names: every kind of object it is the id of (ids are random, so one in
 * practice; a uuid may be an event's or a mail job's), with what the console links by; NOT_FOUND when nothing.
 */
export async function lookUpId(ctx: ConsolePorts, id: string): Promise<OpsLookupAnswer> {
  const matches = (await Promise.all(finders.map((find) => find(ctx, id)))).flat();
  if (matches.length === 0) throw new DomainError('NOT_FOUND');
  return { id, matches };
}
