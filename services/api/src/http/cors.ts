import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyCors from '@fastify/cors';
import { isTrustedOrigin } from './trusted-origins.ts';

/**
 * What better-auth's client sends beyond the CORS-safelisted headers: JSON bodies (`content-type`), the
 * bearer plugin's `authorization`, the captcha plugin's `x-captcha-response` (passed in `fetchOptions.headers`),
 * and a request id to follow a request through the logs.
 */
const ALLOWED_HEADERS = ['content-type', 'authorization', 'x-captcha-response', 'x-request-id'];

/**
 * What a page may read of an answer beyond the safelisted headers: the bearer plugin's `set-auth-token`,
 * the rate limit's `x-retry-after` and `retry-after`, and the request id.
 */
const EXPOSED_HEADERS = ['set-auth-token', 'x-retry-after', 'retry-after', 'x-request-id'];

/** A browser caches a preflight this long (Chromium caps it at two hours), sparing one request per call. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for apps on the trusted origins (BASE_URL's and TRUSTED_ORIGINS, matched as the origin check matches
 * them): their requests, credentialed ones included, are answered with `Access-Control-Allow-Origin` naming
 * them and `Access-Control-Allow-Credentials`, and their preflights with 204. An untrusted origin, or a
 * request without one, gets no CORS header: its preflight finds no route (404, as before) and its other
 * requests meet the origin check as they always did, so CORS grants nothing the origin check refuses.
 *
 * Registered before the perimeter's hook, so a refusal (a 429 with its `x-retry-after`) reaches the page
 * readable; a preflight is answered before the perimeter, as a CORS middleware in front of better-auth
 * answers it, so it counts against no rate limit.
 */
export async function registerCors(app: FastifyInstance, trustedOrigins: readonly string[]): Promise<void> {
  await app.register(fastifyCors, {
    origin: (origin, callback) => callback(null, origin !== undefined && isTrustedOrigin(origin, trustedOrigins) ? origin : false),
    credentials: true,
    methods: ['GET', 'POST'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    // An OPTIONS from a trusted origin without Access-Control-Request-Method is answered as a preflight
    // too, rather than with the plugin's uncatalogued 400.
    strictPreflight: false,
  });
}

/**
 * Adds a header to `Access-Control-Expose-Headers` beside those already there (CORS's own list), as
 * better-auth's bearer plugin does: a page on another origin reads `set-auth-token` only if it is exposed.
 */
export function exposeHeader(reply: FastifyReply, name: string): void {
  const current = reply.getHeader('access-control-expose-headers');
  const listed = typeof current === 'string' && current !== '' ? current.split(',').map((h) => h.trim().toLowerCase()) : [];
  if (listed.includes(name)) return;
  reply.header('access-control-expose-headers', [...listed, name].join(', '));
}
