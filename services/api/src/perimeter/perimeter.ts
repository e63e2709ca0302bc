import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { hostileInput } from './hostile-input.ts';
import { originCheck } from './origin-check.ts';
import { rateLimit } from './rate-limit.ts';

/**
 * The security perimeter of the auth API, in better-auth's order: the rate limit first (onRequest, before
 * the body is read), then, once the body is parsed, the origin and redirect checks, then hostile input.
 * Registered before the routes, so every route gets it; the probes outside the base path do not.
 */
export async function registerPerimeter(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  await app.register(rateLimit(ctx));
  await app.register(originCheck(ctx));
  await app.register(hostileInput(ctx));
}
