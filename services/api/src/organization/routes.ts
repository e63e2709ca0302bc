import type { FastifyInstance } from 'fastify';
import type { OrganizationPorts } from './ports.ts';
import { invitationRoutes } from './invitation.routes.ts';
import { memberRoutes } from './member.routes.ts';
import { organizationCoreRoutes } from './organization.routes.ts';
import { teamRoutes } from './team.routes.ts';

/** better-auth's organization plugin endpoints, under `/organization/`. */
export function organizationRoutes(ctx: OrganizationPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    await app.register(organizationCoreRoutes(ctx));
    await app.register(memberRoutes(ctx));
    await app.register(invitationRoutes(ctx));
    await app.register(teamRoutes(ctx));
  };
}
