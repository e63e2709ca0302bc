import type { FastifyInstance } from 'fastify';
import { consoleOpsEndpoints as endpoints } from '@portcullis/contracts';
import type { ConsolePorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { operatorAccess } from '../http/operator-access.ts';
import { lookUpId } from './id-lookup.ts';
import { listLiveSessions } from './live-sessions.ts';
import { listOrganizations, organizationDetail } from './organization-views.ts';
import { userPage } from './user-page.ts';

/**
 * The ops console's admin reads over every user, session and organization: for operators, as the audit
 * trail is (x-api-key, or an admin's own session).
 */
export function adminViewRoutes(ctx: ConsolePorts) {
  const authorize = operatorAccess(ctx, { sessions: true });

  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.opsSessions, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return listLiveSessions(ctx, request.query);
    });

    route(app, endpoints.opsOrganizations, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return listOrganizations(ctx, request.query);
    });

    route(app, endpoints.opsOrganization, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return organizationDetail(ctx, request.params.id);
    });

    route(app, endpoints.opsUser, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return userPage(ctx, request.params.id);
    });

    route(app, endpoints.opsLookup, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return lookUpId(ctx, request.query.id);
    });
  };
}
