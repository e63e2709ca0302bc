import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError } from '@portcullis/contracts';
import { readDevMailbox, sql } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { serverCall } from '../http/server-call.ts';
import { parseQuery } from '../http/validation.ts';

const mailboxQuerySchema = z.object({
  to: z.string().max(320).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

const deliveriesQuerySchema = z.object({
  status: z.enum(['pending', 'sent', 'dead']).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** Hosts that only this machine can reach the api on. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * Mail for operators: the dev mailbox (mail the embedded default "sent" without SMTP_URL) and the delivery
 * log with its dead letters. Mail carries live reset and deletion links, so these answer only operators
 * (server calls with x-api-key), except in development while the api listens on loopback alone, where
 * whoever can reach it is on this machine.
 */
export function mailOpsRoutes(ctx: ApiContext) {
  const openToLocalCallers = ctx.config.env !== 'production' && LOOPBACK_HOSTS.has(ctx.config.host);
  function authorize(request: FastifyRequest): void {
    const call = serverCall(ctx, request);
    if (call === 'accepted') return;
    if (call === 'absent' && openToLocalCallers) return;
    throw new DomainError('UNAUTHORIZED');
  }

  return async function register(app: FastifyInstance): Promise<void> {
    app.get('/ops/mailbox', async (request, reply) => {
      authorize(request);
      const query = parseQuery(mailboxQuerySchema, request.query);
      reply.header('cache-control', 'no-store');
      return { messages: await readDevMailbox(ctx.pool, { ...(query.to ? { to: query.to } : {}), limit: query.limit }) };
    });

    app.get('/ops/mail/deliveries', async (request, reply) => {
      authorize(request);
      const query = parseQuery(deliveriesQuerySchema, request.query);
      const rows = (await ctx.pool.any(sql.unsafe`
        SELECT job_id, kind, user_id, recipient, status, attempts, next_attempt_at, last_error, transport, message_id,
               smtp_response, received_at, sent_at, dead_at
        FROM mail_delivery
        WHERE ${query.status ? sql.fragment`status = ${query.status}` : sql.fragment`true`}
        ORDER BY updated_at DESC LIMIT ${query.limit}`)) as readonly Record<string, unknown>[];
      const iso = (value: unknown): string | null => (value === null || value === undefined ? null : new Date(value as number).toISOString());
      reply.header('cache-control', 'no-store');
      return {
        deliveries: rows.map((r) => ({
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
