import type { FastifyRequest } from 'fastify';

/**
 * The request's path under the auth base path (`/sign-in/email`), or null outside it (`/healthz`, `/readyz`):
 * the perimeter guards the auth API, not the probes an orchestrator polls. Normalised as better-auth's
 * plugins normalise it before matching their rules (repeated slashes as one, no trailing slash), so that
 * `/sign-in/email/` meets the rate limit and captcha rules of `/sign-in/email`.
 */
export function authPath(request: FastifyRequest, basePath: string): string | null {
  const end = request.url.search(/[?#]/);
  let path = end === -1 ? request.url : request.url.slice(0, end);
  if (path.includes('//')) path = path.replace(/\/{2,}/g, '/');
  if (path === basePath) return '/';
  if (!path.startsWith(`${basePath}/`)) return null;
  return path.length > basePath.length + 1 && path.endsWith('/') ? path.slice(basePath.length, -1) : path.slice(basePath.length);
}

/** The matched route's pattern under the base path (`/reset-password/:token`), or null when no route matched. */
export function authRoute(request: FastifyRequest, basePath: string): string | null {
  const route = request.routeOptions.url;
  return route !== undefined && route.startsWith(`${basePath}/`) ? route.slice(basePath.length) : null;
}
