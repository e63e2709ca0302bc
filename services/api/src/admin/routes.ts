import type { FastifyInstance } from 'fastify';
import type { AdminPorts } from './ports.ts';
import { adminSessionRoutes } from './sessions.routes.ts';
import { adminUserRoutes } from './users.routes.ts';

/** better-auth's admin plugin, under `<basePath>/admin/`. */
export function adminRoutes(ctx: AdminPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    await app.register(adminUserRoutes(ctx));
    await app.register(adminSessionRoutes(ctx));
  };
}
