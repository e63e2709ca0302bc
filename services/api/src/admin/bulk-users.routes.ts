import type { FastifyInstance } from 'fastify';
import { consoleOpsEndpoints as endpoints, DomainError, type OpsUsersBulkAnswer, type UserRef } from '@portcullis/contracts';
import { sql, type RequestMetadata } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import type { AdminAuthority, Permissions } from './access.decider.ts';
import { authorityOf, existingUser, requireAdminAction } from './admin-guard.ts';
import { changeUser } from './change-user.command.ts';
import { revokeUserSessions } from './revoke-user-sessions.command.ts';

type BulkAction = OpsUsersBulkAnswer['action'];

/** Users acted on at once: each is a command of its own (its own stream, its own settling), so a few overlap. */
const CONCURRENCY = 4;

/** What each action asks of the caller's roles, and the refusal when they lack it, as the single-user endpoints. */
const rights: Record<BulkAction, { readonly permissions: Permissions; readonly refusal: 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS' | 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS' }> = {
  'revoke-sessions': { permissions: { session: ['revoke'] }, refusal: 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS' },
  ban: { permissions: { user: ['ban'] }, refusal: 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS' },
  unban: { permissions: { user: ['ban'] }, refusal: 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS' },
};

type Outcome = { readonly ok: true } | { readonly ok: false; readonly code: string; readonly message: string };

/** Runs `work` over `items` at most `limit` at a time, answering in the items' order. */
async function inTurns<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * The ops console's bulk actions: the single-user admin endpoints' commands, run per user with the caller as
 * actor and each user's own refusal answered beside the others' results (the rule for admins acting on
 * admins, banning yourself, an unknown user). Root-level (`/ops/users/bulk`), as the console's other calls.
 */
export function adminBulkRoutes(ctx: AdminPorts) {
  async function act(action: BulkAction, metadata: RequestMetadata, by: AdminAuthority, userId: string, ban: { reason: string; expiresAt: string | null }): Promise<Outcome> {
    try {
      if (action === 'revoke-sessions') {
        // revoke-user-sessions answers success for anyone; a bulk result says when nobody was there.
        await existingUser(ctx, userId);
        await revokeUserSessions(ctx, metadata, { by, userId });
      } else if (action === 'ban') {
        await changeUser(ctx, metadata, userId, { type: 'ban', by, reason: ban.reason, expiresAt: ban.expiresAt });
      } else {
        await changeUser(ctx, metadata, userId, { type: 'unban', by });
      }
      return { ok: true };
    } catch (error) {
      if (error instanceof DomainError) return { ok: false, code: error.code, message: error.message };
      ctx.log.error({ err: error, action, userId }, 'a bulk admin action failed for one user');
      return { ok: false, code: 'INTERNAL_SERVER_ERROR', message: 'Internal Server Error' };
    }
  }

  async function namesOf(userIds: readonly string[]): Promise<Map<string, UserRef>> {
    const rows = (await ctx.pool.any(sql.unsafe`SELECT id, name, email FROM "user" WHERE id = ANY(${sql.array([...userIds], 'text')})`)) as readonly UserRef[];
    return new Map(rows.map((row) => [row.id, row]));
  }

  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.opsUsersBulk, async (request, reply): Promise<OpsUsersBulkAnswer> => {
      const { action, banReason, banExpiresIn } = request.body;
      const { permissions, refusal } = rights[action];
      const caller = await requireAdminAction(ctx, request, reply, permissions, refusal);
      const by = authorityOf(ctx, caller);
      const metadata = requestMetadataOf(request);
      const userIds = [...new Set(request.body.userIds)];
      const ban = { reason: banReason || 'No reason', expiresAt: banExpiresIn ? new Date(ctx.clock().getTime() + banExpiresIn * 1000).toISOString() : null };
      const outcomes = await inTurns(userIds, CONCURRENCY, (userId) => act(action, metadata, by, userId, ban));
      const names = await namesOf(userIds);
      const results = userIds.map((userId, i) => {
        const outcome = outcomes[i]!;
        return {
          user: names.get(userId) ?? { id: userId, name: null, email: null },
          ok: outcome.ok,
          code: outcome.ok ? null : outcome.code,
          message: outcome.ok ? null : outcome.message,
        };
      });
      reply.header('cache-control', 'no-store');
      const succeeded = results.filter((r) => r.ok).length;
      return { action, results, succeeded, failed: results.length - succeeded };
    });
  };
}
