import type { FastifyInstance } from 'fastify';
import { DomainError, projectionOpsEndpoints as endpoints, rebuildableProjectionNames } from '@portcullis/contracts';
import type { SessionPorts } from '../session/ports.ts';
import type { OpsPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { operatorAccess } from '../http/operator-access.ts';
import { operatorIdOf } from './operator-id.ts';
import { findRebuild } from './projections-rebuild.ts';
import { requestRebuild } from './request-rebuild.command.ts';
import { deployedProjections, projectionStatuses } from './projections-status.ts';

/**
 * The projections for operators (see `operatorAccess`, an admin's session included): their state, and
 * rebuilds, which the api only records for a projector process to run (the api runs no projection code).
 */
export function projectionRoutes(ctx: OpsPorts & SessionPorts) {
  const authorize = operatorAccess(ctx, { sessions: true, refusal: 'YOU_ARE_NOT_ALLOWED_TO_OPERATE' });

  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.listProjections, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return projectionStatuses(ctx);
    });

    route(app, endpoints.rebuildProjection, async (request, reply) => {
      await authorize(request, reply);
      const { name } = request.params;
      if (!deployedProjections(ctx).includes(name)) throw new DomainError('PROJECTION_NOT_FOUND');
      // The erasure projection and the mail followers own no read model: replaying them redoes side effects.
      if (!rebuildableProjectionNames.has(name)) throw new DomainError('PROJECTION_CANNOT_BE_REBUILT');
      reply.header('cache-control', 'no-store');
      return requestRebuild(ctx, name, await operatorIdOf(ctx, request, reply));
    });

    route(app, endpoints.projectionRebuild, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return findRebuild(ctx.pool, request.params.id);
    });
  };
}
