import type { FastifyInstance } from 'fastify';
import { auditEndpoints as endpoints } from '@portcullis/contracts';
import type { AuditPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import type { OperatorCheck } from '../http/operator-access.ts';
import { timeTravel, type AuditStreamModels } from './time-travel.ts';

/** `GET /ops/audit/users/:id` and `/ops/audit/organizations/:id`, `?at=` and `?diffFrom=` (see `timeTravel`). */
export function timeTravelRoutes(ctx: AuditPorts, authorize: OperatorCheck, models?: AuditStreamModels) {
  const travel = timeTravel({ store: ctx.store, db: ctx.pool, clock: ctx.clock, models });
  return function register(app: FastifyInstance): void {
    route(app, endpoints.auditUserAt, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return travel.userAt(request.params.id, request.query);
    });
    route(app, endpoints.auditOrganizationAt, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return travel.organizationAt(request.params.id, request.query);
    });
  };
}
