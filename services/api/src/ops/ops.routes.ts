import type { FastifyInstance } from 'fastify';
import { opsEndpoints as endpoints, projectionNames } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { OpsPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { errorCode, renderErrorPage } from './error-page.ts';

/** A projection further behind the log than this is not ready to serve reads. */
const READY_MAX_LAG = 1000;

/**
 * How long readiness waits for Redis's PONG: a Redis that went away must not hold the probe past its own
 * timeout (Kubernetes' default is a second), which would count as unready.
 */
const REDIS_PING_TIMEOUT_MS = 500;

function withinRedisTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${REDIS_PING_TIMEOUT_MS} ms`)), REDIS_PING_TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

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

    // Ready while it can serve: Postgres holds everything Redis caches (sessions are read from the read
    // models or the log, rate-limit counts are kept in Postgres), so a Redis away degrades the api rather
    // than takes it out of the load balancer, where every replica would go at once.
    route(app, endpoints.readyz, async (_request, reply) => {
      const checks: Record<string, { ok: boolean; degraded?: boolean; detail?: string }> = {};
      // The log's head (in Postgres, or in KurrentDB under its own name) beside the read models' checkpoints
      // (in Postgres): an operator told "postgres" when KurrentDB is down would look in the wrong place.
      const logCheck = ctx.config.eventStoreUrl ? 'kurrentdb' : 'postgres';
      const readModels = ctx.progress.readModels;
      // A check that failed stays failed, whichever of the two answers last.
      const checked = async <T>(name: string, work: Promise<T>): Promise<T | null> => {
        try {
          const value = await work;
          checks[name] ??= { ok: true };
          return value;
        } catch (error) {
          checks[name] = { ok: false, detail: (error as Error).message };
          return null;
        }
      };
      const [head, known] = await Promise.all([
        checked(logCheck, ctx.store.headPosition()),
        checked('postgres', ctx.pool.oneFirst(sql.unsafe`SELECT count(*) FROM projection_checkpoints WHERE name = ANY(${sql.array([...readModels], 'text')})`).then(Number)),
      ]);
      if (head !== null && known !== null) {
        const lag = head - ctx.progress.caughtUpTo;
        // The Redis cache keeps its checkpoint in Redis; the others have a row each.
        const started = known >= readModels.filter((name) => name !== projectionNames.sessionCache).length;
        checks.projections = { ok: started && lag <= READY_MAX_LAG, detail: started ? `lag ${lag}` : 'not started' };
      }
      if (ctx.cache) {
        try {
          await withinRedisTimeout(ctx.cache.redis.ping());
          checks.redis = { ok: true };
        } catch (error) {
          checks.redis = { ok: false, degraded: true, detail: `${(error as Error).message}; answering from Postgres` };
        }
      }
      const ready = Object.values(checks).every((c) => c.ok || c.degraded === true) && checks.projections !== undefined;
      const status = !ready ? 'not_ready' : Object.values(checks).every((c) => c.ok) ? 'ready' : 'degraded';
      return reply.status(ready ? 200 : 503).send({ status, checks });
    });
  };
}
