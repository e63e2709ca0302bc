import type { FastifyRequest } from 'fastify';

/**
 * The request's path under the auth base path (`/sign-in/email`), or null outside it (`/healthz`, `/readyz`):
 * the perimeter guards the auth API, not the probes an orchestrator polls.
 */
export function authPath(request: FastifyRequest, basePath: string): string | null {
  const end = request.url.search(/[?#]/);
  const path = end === -1 ? request.url : request.url.slice(0, end);
  if (path === basePath) return '/';
  return path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : null;
}

/** The matched route's pattern under the base path (`/reset-password/:token`), or null when no route matched. */
export function authRoute(request: FastifyRequest, basePath: string): string | null {
  const route = request.routeOptions.url;
  return route !== undefined && route.startsWith(`${basePath}/`) ? route.slice(basePath.length) : null;
}
