import type { FastifyRequest } from 'fastify';

/**
 * What the perimeter guards a request as, from the route the router dispatched it to:
 * - `route`: a route of the auth API, by its pattern under the base path (`/sign-in/email`,
 *   `/reset-password/:token`);
 * - `unrouted`: no route matched, wherever the path pointed (the answer is a 404);
 * - null: a route outside the base path (the probes, the start page, the ops routes), which passes untouched.
 *
 * The pattern, never the path as written: the router percent-decodes the path and takes absolute-form
 * request lines (`POST http://host/api/auth/sign-in/email`), so `/api/auth/%73ign-in/email` reaches the
 * sign-in handler. A decision taken on the raw path would put that spelling under another rule (or, for
 * the absolute form, under none), give each spelling a budget of its own and let it skip the captcha.
 */
export type GuardedRequest = { readonly kind: 'route'; readonly path: string } | { readonly kind: 'unrouted' } | null;

const UNROUTED: GuardedRequest = { kind: 'unrouted' };

/** Built once per route pattern: a request only looks its pattern up. */
const guardedRoutes = new Map<string, GuardedRequest>();

export function guardedRequest(request: FastifyRequest, basePath: string): GuardedRequest {
  const route = request.routeOptions.url;
  if (route === undefined) return UNROUTED;
  const key = `${basePath} ${route}`;
  let guarded = guardedRoutes.get(key);
  if (guarded === undefined) {
    guarded = route === basePath ? { kind: 'route', path: '/' } : route.startsWith(`${basePath}/`) ? { kind: 'route', path: route.slice(basePath.length) } : null;
    // Keyed by the app's own route patterns and base paths: bounded by the routes there are, whatever is requested.
    guardedRoutes.set(key, guarded);
  }
  return guarded;
}
