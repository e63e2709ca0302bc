import type { FastifyInstance } from 'fastify';
import { accountLifecycleEndpoints as endpoints } from '@portcullis/contracts';
import type { AccountPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { requireFreshSession, requireSession } from '../session/current-session.ts';
import { unlinkAccount } from './unlink-account.command.ts';

/** POST /unlink-account, as better-auth decides it: a fresh session, never the last account, then the one named. */
export function unlinkAccountRoutes(ctx: AccountPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.unlinkAccount, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      requireFreshSession(ctx, current);
      await unlinkAccount(ctx, requestMetadataOf(request), { userId: current.user.id, providerId: request.body.providerId, accountId: request.body.accountId });
      return { status: true };
    });
  };
}
