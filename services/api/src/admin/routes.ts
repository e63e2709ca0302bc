import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { adminSessionRoutes } from './sessions.routes.ts';
import { adminUserRoutes } from './users.routes.ts';

/** better-auth's admin plugin, under `<basePath>/admin/`. */
export function adminRoutes(ctx: ApiContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    await app.register(adminUserRoutes(ctx));
    await app.register(adminSessionRoutes(ctx));
  };
}
