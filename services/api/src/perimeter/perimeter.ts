import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PerimeterPorts } from './ports.ts';
import { captcha } from './captcha.ts';
import { requireClientAddress } from './client-address.ts';
import { hostileInput } from './hostile-input.ts';
import { originCheck } from './origin-check.ts';
import { rateLimiter } from './rate-limit.ts';
import { refusalLog } from './refusal-log.ts';
import { guardedRequest, type GuardedRequest } from './request-path.ts';

/**
 * A check before the body is read, given what the request is guarded as (its matched route under the base
 * path, `unrouted`, or null outside the base path): returns to let the request on, or a promise of that; a
 * refusal throws.
 */
export type AdmissionCheck = (request: FastifyRequest, reply: FastifyReply, guarded: GuardedRequest) => void | Promise<void>;
/**
 * A check of the parsed body, query and parameters of a routed request: `route` is its pattern under the base
 * path, or null for a route outside it (the ops endpoints); a refusal throws.
 */
export type InputCheck = (request: FastifyRequest, route: string | null) => void;

type Done = (error?: Error) => void;

/**
 * The security perimeter of the auth API, in better-auth's order: the rate limit, then captcha, before the
 * body is read (`admit`, for the onRequest phase); once it is parsed, the origin and redirect checks, then
 * hostile input (`inspect`, for preValidation). Routes outside the base path (the probes, the ops endpoints)
 * meet the hostile-input check alone.
 *
 * Every check decides on the route the router dispatched the request to (see `guardedRequest`), never on
 * the path as written, so each spelling of a route meets the same rules.
 *
 * Each phase is one hook however many checks it holds: fastify sets up a hook runner per request for every
 * hook, and on a cached get-session that machinery cost more than the checks themselves.
 */
export interface Perimeter {
  admit(request: FastifyRequest, reply: FastifyReply, done: Done): void;
  inspect(request: FastifyRequest, reply: FastifyReply, done: Done): void;
  close(): Promise<void>;
}

export function perimeter(ctx: PerimeterPorts): Perimeter {
  const { basePath } = ctx.config;
  const refusals = refusalLog(ctx);
  const limiter = rateLimiter(ctx, refusals);
  const admissions = [requireClientAddress, limiter?.check, captcha(ctx, refusals)].filter((check): check is AdmissionCheck => check != null);
  const checkOrigin = originCheck(ctx);
  const checkInput = hostileInput();

  // Synchronous until a check answers with a promise, so most requests cost no promise here.
  function admitFrom(first: number, request: FastifyRequest, reply: FastifyReply, guarded: GuardedRequest, done: Done): void {
    for (let i = first; i < admissions.length; i += 1) {
      let pending: void | Promise<void>;
      try {
        pending = admissions[i]!(request, reply, guarded);
      } catch (error) {
        return done(error as Error);
      }
      if (pending) {
        pending.then(() => admitFrom(i + 1, request, reply, guarded, done), done);
        return;
      }
    }
    done();
  }

  return {
    // The route is looked up once per phase, for every check of it.
    admit: (request, reply, done) => admitFrom(0, request, reply, guardedRequest(request, basePath), done),
    inspect: (request, _reply, done) => {
      // An unrouted request is answered 404 without its input reaching anything.
      const guarded = guardedRequest(request, basePath);
      if (guarded?.kind === 'unrouted') return done();
      const route = guarded?.kind === 'route' ? guarded.path : null;
      try {
        // The origin rules are the auth API's; hostile input is refused everywhere.
        if (route !== null) checkOrigin(request, route);
        checkInput(request, route);
      } catch (error) {
        return done(error as Error);
      }
      done();
    },
    close: async () => {
      await limiter?.close();
      await refusals.settled();
    },
  };
}
