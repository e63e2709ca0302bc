import type { FastifyInstance } from 'fastify';
import { mailOpsEndpoints as endpoints, type MailDelivery } from '@portcullis/contracts';
import { readDevMailbox, sql } from '@portcullis/platform';
import type { OpsPorts } from './ports.ts';
import { operatorAccess } from '../http/operator-access.ts';
import { route } from '../http/declared-route.ts';

interface DeliveryRow {
  readonly job_id: string;
  readonly kind: string;
  readonly user_id: string | null;
  readonly recipient: string;
  readonly status: MailDelivery['status'];
  readonly attempts: number;
  readonly next_attempt_at: number | null;
  readonly last_error: string | null;
  readonly transport: string | null;
  readonly message_id: string | null;
  readonly smtp_response: string | null;
  readonly received_at: number | null;
  readonly sent_at: number | null;
  readonly dead_at: number | null;
}

/**
 * Mail for operators: the dev mailbox (mail the embedded default "sent" without SMTP_URL) and the delivery
 * log with its dead letters. Mail carries live reset and deletion links, so these answer only operators
 * (server calls with x-api-key), except in development while the api listens on loopback alone, where
 * whoever can reach it is on this machine.
 */
export function mailOpsRoutes(ctx: OpsPorts) {
  const authorize = operatorAccess(ctx);

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
      const rows = (await ctx.pool.any(sql.unsafe`
        SELECT job_id, kind, user_id, recipient, status, attempts, next_attempt_at, last_error, transport, message_id,
               smtp_response, received_at, sent_at, dead_at
        FROM mail_delivery
        WHERE ${query.status ? sql.fragment`status = ${query.status}` : sql.fragment`true`}
        ORDER BY updated_at DESC LIMIT ${query.limit}`)) as readonly DeliveryRow[];
      const iso = (value: number | null): string | null => (value === null ? null : new Date(value).toISOString());
      reply.header('cache-control', 'no-store');
      return {
        deliveries: rows.map((r): MailDelivery => ({
          jobId: r.job_id,
          kind: r.kind,
          userId: r.user_id,
          to: r.recipient,
          status: r.status,
          attempts: r.attempts,
          nextAttemptAt: iso(r.next_attempt_at),
          lastError: r.last_error,
          transport: r.transport,
          messageId: r.message_id,
          smtpResponse: r.smtp_response,
          receivedAt: iso(r.received_at),
          sentAt: iso(r.sent_at),
          deadAt: iso(r.dead_at),
        })),
      };
    });
  };
}
