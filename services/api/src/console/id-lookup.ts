import { DomainError, streams, type OpsLookupAnswer, type OpsLookupMatch } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { ConsolePorts } from './ports.ts';
import { isoTime } from '../read-model.ts';
import { refOf, userJoin, userRefColumns } from './user-ref.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A log position as a log line shows it; past this it is no bigint. */
const POSITION = /^\d{1,15}$/;

type Row = Readonly<Record<string, unknown>>;
type Finder = (ctx: ConsolePorts, id: string) => Promise<OpsLookupMatch[]>;

/** The first event of a stream, where the log has one: what names an object gone from the read models. */
async function streamOpening(ctx: ConsolePorts, streamId: string): Promise<{ readonly data: Row } | null> {
  return (await ctx.pool.maybeOne(sql.unsafe`SELECT data FROM events WHERE stream_id = ${streamId} AND stream_version = 1`)) as { data: Row } | null;
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

const findEvent: Finder = async (ctx, id) => {
  const where = UUID.test(id) ? sql.fragment`event_id = ${id}::uuid` : POSITION.test(id) ? sql.fragment`position = ${id}::bigint` : null;
  if (where === null) return [];
  const row = (await ctx.pool.maybeOne(sql.unsafe`SELECT position, event_id, stream_id, type, recorded_at FROM events WHERE ${where}`)) as
    | { position: number | string; event_id: string; stream_id: string; type: string; recorded_at: number }
    | null;
  if (!row) return [];
  return [{ kind: 'event', id: row.event_id, position: Number(row.position), streamId: row.stream_id, type: row.type, recordedAt: isoTime(row.recorded_at) }];
};

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
