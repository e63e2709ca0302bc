import type { FastifyInstance } from 'fastify';
import { auditEndpoints as endpoints } from '@portcullis/contracts';
import type { AuditPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import type { OperatorCheck } from '../http/operator-access.ts';
import { auditEventDetail } from './audit-event-detail.ts';
import { timeTravel, type AuditStreamModels } from './time-travel.ts';
import { timeTravelHistory } from './time-travel-history.ts';

/**
 * `GET /ops/audit/users/:id` and `/ops/audit/organizations/:id`, `?at=` and `?diffFrom=` (see `timeTravel`),
 * their `/history` (the slider's marks), and one event with the states it changed (`/ops/audit/events/:position`).
 */
export function timeTravelRoutes(ctx: AuditPorts, authorize: OperatorCheck, models?: AuditStreamModels) {
  const travel = timeTravel({ store: ctx.store, db: ctx.pool, personalData: ctx.personalData, clock: ctx.clock, models });
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
    route(app, endpoints.auditUserHistory, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return timeTravelHistory.user(ctx.store, request.params.id, request.query);
    });
    route(app, endpoints.auditOrganizationHistory, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return timeTravelHistory.organization(ctx.store, request.params.id, request.query);
    });
    route(app, endpoints.auditEvent, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return auditEventDetail({ db: ctx.pool, store: ctx.store, chain: ctx.chain, personalData: ctx.personalData, travel, withOrganizations: models !== undefined }, request.params.position);
    });
  };
}
