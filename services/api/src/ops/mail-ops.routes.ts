import type { FastifyInstance } from 'fastify';
import { mailOpsEndpoints as endpoints, type MailDelivery, type MailQueue } from '@portcullis/contracts';
import { readDevMailbox, sql } from '@portcullis/platform';
import type { CommandsPort } from '../ports.ts';
import type { SessionPorts } from '../session/ports.ts';
import type { OpsPorts } from './ports.ts';
import { operatorAccess } from '../http/operator-access.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { operatorIdOf } from './operator-id.ts';
import { retryMailDelivery } from './retry-mail-delivery.command.ts';

interface DeliveryRow {
  readonly job_id: string;
  readonly kind: string;
  readonly user_id: string | null;
  readonly recipient: string;
  readonly status: MailDelivery['status'];
  readonly attempts: number;
  readonly first_attempted_at: number | null;
  readonly next_attempt_at: number | null;
  readonly last_error: string | null;
  readonly transport: string | null;
  readonly message_id: string | null;
  readonly smtp_response: string | null;
  readonly received_at: number | null;
  readonly sent_at: number | null;
  readonly dead_at: number | null;
  readonly total: string;
}

const iso = (value: number | null): string | null => (value === null ? null : new Date(value).toISOString());

function deliveryOf(r: DeliveryRow): MailDelivery {
  return {
    jobId: r.job_id,
    kind: r.kind,
    userId: r.user_id,
    to: r.recipient,
    status: r.status,
    attempts: r.attempts,
    firstAttemptedAt: iso(r.first_attempted_at),
    nextAttemptAt: iso(r.next_attempt_at),
    lastError: r.last_error,
    transport: r.transport,
    messageId: r.message_id,
    smtpResponse: r.smtp_response,
    receivedAt: iso(r.received_at),
    sentAt: iso(r.sent_at),
    deadAt: iso(r.dead_at),
  };
}

/** `%` and `_` in a recipient searched for are themselves, not patterns. */
function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Mail for operators: the dev mailbox (mail the embedded default "sent" without SMTP_URL), the delivery log
 * with its dead letters and their retry, and the queue's depth. Mail carries live reset and deletion links,
 * so these answer only operators (see `operatorAccess`): server calls, an admin's session, or anyone on
 * an api that listens on loopback alone.
 */
export function mailOpsRoutes(ctx: OpsPorts & SessionPorts & CommandsPort) {
  const authorize = operatorAccess(ctx, { sessions: true, refusal: 'YOU_ARE_NOT_ALLOWED_TO_OPERATE' });

  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.mailbox, async (request, reply) => {
      await authorize(request, reply);
      const { query } = request;
      reply.header('cache-control', 'no-store');
      return { messages: await readDevMailbox(ctx.pool, { ...(query.to ? { to: query.to } : {}), limit: query.limit }) };
    });

    route(app, endpoints.mailDeliveries, async (request, reply) => {
      await authorize(request, reply);
      const { query } = request;
      const conditions = [
        query.status ? sql.fragment`status = ANY(${sql.array(query.status, 'text')})` : null,
        query.kind ? sql.fragment`kind = ANY(${sql.array(query.kind, 'text')})` : null,
        query.to ? sql.fragment`recipient ILIKE ${`%${likeEscaped(query.to)}%`}` : null,
        query.userId ? sql.fragment`user_id = ${query.userId}` : null,
        query.jobId ? sql.fragment`job_id = ${query.jobId}` : null,
      ].filter((c) => c !== null);
      const where = conditions.length > 0 ? sql.join(conditions, sql.fragment` AND `) : sql.fragment`true`;
      // The total with the page, in one read: a window over the filtered rows before the limit.
      const rows = (await ctx.pool.any(sql.unsafe`
        SELECT job_id, kind, user_id, recipient, status, attempts, first_attempted_at, next_attempt_at, last_error, transport, message_id,
               smtp_response, received_at, sent_at, dead_at, count(*) OVER ()::text AS total
        FROM mail_delivery WHERE ${where}
        ORDER BY updated_at DESC, job_id LIMIT ${query.limit} OFFSET ${query.offset}`)) as readonly DeliveryRow[];
      // A page past the end has no row to carry the total.
      const total =
        rows.length > 0
          ? Number(rows[0]!.total)
          : query.offset === 0
            ? 0
            : Number(await ctx.pool.oneFirst(sql.unsafe`SELECT count(*)::text FROM mail_delivery WHERE ${where}`));
      reply.header('cache-control', 'no-store');
      return { deliveries: rows.map(deliveryOf), total };
    });

    route(app, endpoints.retryMailDelivery, async (request, reply) => {
      await authorize(request, reply);
      const operatorId = await operatorIdOf(ctx, request, reply);
      return retryMailDelivery(ctx, requestMetadataOf(request), { jobId: request.params.jobId, operatorId });
    });

    route(app, endpoints.mailQueue, async (request, reply) => {
      await authorize(request, reply);
      const row = (await ctx.pool.one(sql.unsafe`
        WITH oldest AS (SELECT min(received_at) AS at FROM mail_delivery WHERE status = 'pending')
        SELECT (SELECT count(*) FROM mail_delivery WHERE status = 'pending')::int AS pending,
               (SELECT count(*) FROM mail_delivery WHERE status = 'pending' AND waiting_for_relay)::int AS waiting_for_relay,
               (SELECT count(*) FROM mail_delivery WHERE status = 'dead')::int AS dead,
               (SELECT count(*) FROM mail_delivery WHERE status = 'sent' AND sent_at > now() - interval '24 hours')::int AS sent_last_24h,
               oldest.at AS oldest_unsent_at,
               extract(epoch FROM now() - oldest.at)::float8 AS oldest_unsent_age
        FROM oldest`)) as { pending: number; waiting_for_relay: number; dead: number; sent_last_24h: number; oldest_unsent_at: number | null; oldest_unsent_age: number | null };
      reply.header('cache-control', 'no-store');
      const queue: MailQueue = {
        pending: row.pending,
        waitingForRelay: row.waiting_for_relay,
        dead: row.dead,
        sentLast24h: row.sent_last_24h,
        oldestUnsentAt: iso(row.oldest_unsent_at),
        oldestUnsentAgeSeconds: row.oldest_unsent_age === null ? null : Math.max(0, Math.round(row.oldest_unsent_age * 1000) / 1000),
      };
      return queue;
    });
  };
}
