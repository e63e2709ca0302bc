import type { FastifyRequest } from 'fastify';
import { DomainError, SignInRateLimited } from '@portcullis/contracts';
import {
  BatchedRateLimitCounter,
  PostgresRateLimitStore,
  RedisRateLimitStore,
  rulePathMatches,
  type RateLimit,
  type RateLimitCount,
  type RateLimitStore,
} from '@portcullis/platform';
import type { PerimeterPorts } from './ports.ts';
import { clientAddress } from '../http/client-address.ts';
import { clientBucket } from './client-address.ts';
import type { AdmissionCheck } from './perimeter.ts';
import type { RefusalLog } from './refusal-log.ts';

/**
 * Limits this lenient are counted in the process between batched sends to the shared store (see
 * BatchedRateLimitCounter); tighter ones, like sign-in's 3 per 10 s, are counted in the store every time.
 */
const BATCHED_FROM_MAX = 50;

/** The bucket of every request no route matched: one per client, so random paths cannot mint buckets. */
const UNROUTED_BUCKET = '(unrouted)';

/**
 * The limit for a route (its pattern under the base path, `/reset-password/:token`): the first configured or
 * default rule that covers it, else the general limit.
 */
function limitFor(config: PerimeterPorts['config']['rateLimit'], route: string): RateLimit | null {
  const rule = config.rules.find((r) => rulePathMatches(r.path, route));
  return rule ? rule.limit : { window: config.window, max: config.max };
}

/**
 * Lets the request through, or refuses it with 429 and better-auth's X-Retry-After (and Retry-After) once over
 * the limit. The first sign-in refused in a window is an audit event; later ones in that window are not, so
 * a flood writes one event per window however hard it pushes.
 */
function refuseOverLimit(
  request: FastifyRequest,
  bucketPath: string,
  limit: RateLimit,
  counted: RateLimitCount | null,
  refusals: RefusalLog | null,
): void {
  if (counted) request.log.debug({ bucket: bucketPath, count: counted.count, max: limit.max, window: limit.window }, 'rate-limit count');
  if (!counted || counted.count <= limit.max) return;
  if (refusals && counted.count === limit.max + 1 && bucketPath.startsWith('/sign-in')) {
    refusals.record(request, SignInRateLimited({ route: bucketPath, max: limit.max, windowSeconds: limit.window }));
  }
  request.log.info({ ip: clientAddress(request), path: bucketPath, count: counted.count }, 'rate limited');
  throw new DomainError('TOO_MANY_REQUESTS', { retryAfterSeconds: Math.max(1, Math.ceil(counted.resetInMs / 1000)) });
}

export interface RateLimiter {
  readonly check: AdmissionCheck;
  /** Sends the counts still held in the process. */
  close(): Promise<void>;
}

/**
 * Rate limiting, on by default with better-auth's limits (100 per 10 s per client and path; 3 per 10 s on
 * sign-in, sign-up, change-password and change-email; 3 per 60 s where mail is sent). Counted in the
 * onRequest phase, before the body is even read, in a store every replica shares (Redis when configured,
 * else Postgres); over the limit the answer is 429 with `X-Retry-After` in seconds, as better-auth sends it.
 *
 * Rules and buckets follow the route the router matched, so every spelling of a path (`%73ign-in`, an
 * absolute-form request line) counts against its route's rule and budget. A request no route matched is
 * counted under the general limit, in one bucket per client.
 *
 * The client is the socket's peer, or the address forwarded by a trusted proxy (AUTH_TRUSTED_PROXIES):
 * a client cannot pick its own bucket with a header.
 */
export function rateLimiter(ctx: PerimeterPorts, refusals: RefusalLog | null = null): RateLimiter | null {
  const { rateLimit: settings } = ctx.config;
  if (!settings.enabled) return null;
  const postgres = new PostgresRateLimitStore(ctx.pool, (error) => ctx.log.warn({ err: error }, 'pruning rate-limit rows failed'));
  const redis: RateLimitStore | null =
    settings.storage === 'redis' && ctx.cache && ctx.config.redis ? new RedisRateLimitStore(ctx.cache.redis, ctx.config.redis.keyPrefix) : null;

  /** A Redis outage falls back to Postgres counters (as session reads do) rather than to no limit at all. */
  async function hit(key: string, windowMs: number, by = 1): Promise<RateLimitCount | null> {
    if (redis) {
      try {
        return await redis.hit(key, windowMs, by);
      } catch (error) {
        ctx.log.warn({ err: error }, 'rate-limit count in Redis failed; counting in Postgres');
      }
    }
    try {
      return await postgres.hit(key, windowMs, by);
    } catch (error) {
      // Without a working store the request is let through: every other part of it needs Postgres too,
      // and will fail on its own if Postgres is really gone.
      ctx.log.error({ err: error }, 'rate-limit count failed; request not limited');
      return null;
    }
  }

  const batched =
    settings.batchMs > 0
      ? new BatchedRateLimitCounter(hit, {
          flushEveryMs: settings.batchMs,
          onError: (error) => ctx.log.warn({ err: error }, 'sending batched rate-limit counts failed'),
        })
      : null;

  // The rule a route falls under, looked up once per route: a linear match over every rule on every request
  // showed in profiles. Keyed by the app's route patterns, so no request can grow it.
  const limitsByRoute = new Map<string, RateLimit | null>();
  function limitOf(route: string): RateLimit | null {
    let limit = limitsByRoute.get(route);
    if (limit === undefined) {
      limit = limitFor(settings, route);
      limitsByRoute.set(route, limit);
    }
    return limit;
  }
  const unroutedLimit: RateLimit = { window: settings.window, max: settings.max };

  return {
    // A lenient limit is counted in the process, synchronously: no promise for the request to wait on.
    check(request, _reply, guarded) {
      if (guarded === null) return;
      // A route's pattern, not its concrete path, so /reset-password/<token> guesses share one bucket; and the
      // operation's current path, so its older name (/forget-password) shares the budget rather than doubling it.
      const bucketPath = guarded.kind === 'route' ? (request.routeOptions.config.endpoint?.sameOperationAs ?? guarded.path) : UNROUTED_BUCKET;
      const limit = guarded.kind === 'route' ? limitOf(bucketPath) : unroutedLimit;
      if (!limit) return;
      // requireClientAddress has refused a request without one.
      const key = `${clientBucket(clientAddress(request) ?? '')}|${bucketPath}`;
      const counted = batched && limit.max >= BATCHED_FROM_MAX ? batched.hit(key, limit.window * 1000) : hit(key, limit.window * 1000);
      if (counted instanceof Promise) return counted.then((c) => refuseOverLimit(request, bucketPath, limit, c, refusals));
      refuseOverLimit(request, bucketPath, limit, counted, refusals);
    },
    close: async () => {
      await batched?.close();
    },
  };
}
