import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiContext } from '../context.ts';
import { captcha } from './captcha.ts';
import { hostileInput } from './hostile-input.ts';
import { originCheck } from './origin-check.ts';
import { rateLimiter } from './rate-limit.ts';
import { authPath } from './request-path.ts';

/**
 * A check before the body is read, given the request's path under the base path (null outside it): returns
 * to let the request on, or a promise of that; a refusal throws.
 */
export type AdmissionCheck = (request: FastifyRequest, reply: FastifyReply, path: string | null) => void | Promise<void>;
/** A check of the parsed body and query of a request under the base path; a refusal throws. */
export type InputCheck = (request: FastifyRequest) => void;

type Done = (error?: Error) => void;

/**
 * The security perimeter of the auth API, in better-auth's order: the rate limit, then captcha, before the
 * body is read (`admit`, for the onRequest phase); once it is parsed, the origin and redirect checks, then
 * hostile input (`inspect`, for preValidation). The probes outside the base path pass untouched.
 *
 * Each phase is one hook however many checks it holds: fastify sets up a hook runner per request for every
 * hook, and on a cached get-session that machinery cost more than the checks themselves.
 */
export interface Perimeter {
  admit(request: FastifyRequest, reply: FastifyReply, done: Done): void;
  inspect(request: FastifyRequest, reply: FastifyReply, done: Done): void;
  close(): Promise<void>;
}

export function perimeter(ctx: ApiContext): Perimeter {
  const { basePath } = ctx.config;
  const limiter = rateLimiter(ctx);
  const admissions = [limiter?.check, captcha(ctx)].filter((check): check is AdmissionCheck => check != null);
  const inspections: readonly InputCheck[] = [originCheck(ctx), hostileInput(ctx)];

  // Synchronous until a check answers with a promise, so most requests cost no promise here.
  function admitFrom(first: number, request: FastifyRequest, reply: FastifyReply, path: string | null, done: Done): void {
    for (let i = first; i < admissions.length; i += 1) {
      let pending: void | Promise<void>;
      try {
        pending = admissions[i]!(request, reply, path);
      } catch (error) {
        return done(error as Error);
      }
      if (pending) {
        pending.then(() => admitFrom(i + 1, request, reply, path, done), done);
        return;
      }
    }
    done();
  }

  return {
    // The path is worked out once per phase, for every check of it.
    admit: (request, reply, done) => admitFrom(0, request, reply, authPath(request, basePath), done),
    inspect: (request, _reply, done) => {
      if (authPath(request, basePath) === null) return done();
      try {
        for (const check of inspections) check(request);
      } catch (error) {
        return done(error as Error);
      }
      done();
    },
    close: async () => {
      await limiter?.close();
    },
  };
}
