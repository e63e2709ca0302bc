import type { FastifyInstance } from 'fastify';
import { opsEndpoints as endpoints, projectionNames } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { OpsPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { errorCode, renderErrorPage } from './error-page.ts';

/** A projection further behind the log than this is not ready to serve reads. */
const READY_MAX_LAG = 1000;

export function publicOpsRoutes(ctx: OpsPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.ok, async () => ({ ok: true }));
    route(app, endpoints.errorPage, async (request, reply) => {
      const { query } = request;
      const description = query.error_description ?? null;
      return reply
        .type('text/html; charset=utf-8')
        .send(renderErrorPage(errorCode(query.error), description, `${new URL(ctx.config.baseUrl).origin}/`));
    });
  };
}

export function healthRoutes(ctx: OpsPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.healthz, async () => ({ status: 'ok' }));

    route(app, endpoints.readyz, async (_request, reply) => {
      const checks: Record<string, { ok: boolean; detail?: string }> = {};
      try {
        const head = Number(await ctx.pool.oneFirst(sql.unsafe`SELECT position FROM event_log_head`));
        checks.postgres = { ok: true };
        const readModels = ctx.progress.readModels;
        const lag = head - ctx.progress.caughtUpTo;
        const known = Number(
          await ctx.pool.oneFirst(sql.unsafe`
            SELECT count(*) FROM projection_checkpoints WHERE name = ANY(${sql.array([...readModels], 'text')})`),
        );
        // The Redis cache keeps its checkpoint in Redis; the others have a row each.
        const started = known >= readModels.filter((name) => name !== projectionNames.sessionCache).length;
        checks.projections = { ok: started && lag <= READY_MAX_LAG, detail: started ? `lag ${lag}` : 'not started' };
      } catch (error) {
        checks.postgres = { ok: false, detail: (error as Error).message };
      }
      if (ctx.cache) {
        try {
          await ctx.cache.redis.ping();
          checks.redis = { ok: true };
        } catch (error) {
          checks.redis = { ok: false, detail: (error as Error).message };
        }
      }
      const ready = Object.values(checks).every((c) => c.ok) && checks.projections !== undefined;
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
    });
  };
}
