import type { FastifyRequest } from 'fastify';

/** Query parameters whose values are credentials (mailed tokens, OAuth codes and states). */
const SECRET_PARAMETER = /token|code|state|secret|password|key|signature|otp/i;
/**
 * Query parameters that carry personal data (an email, a name searched for; Apple's `user`, its first
 * sign-in's name and email, carried into the callback's GET): logs outlive any erasure (issue 25).
 */
const PERSONAL_PARAMETER = /email|search|name|phone|^user$/i;

/**
 * The request's URL as it may be logged: a route with path parameters is logged by its pattern
 * (`/api/auth/reset-password/:token`), because the parameter is often the mailed token itself; and the
 * values of credential-like and personal query parameters (`/verify-email?token=...`, `?email=`) are censored. Everything else stays,
 * so a log still tells which flow a request was.
 */
export function loggableUrl(request: Pick<FastifyRequest, 'url'> & { routeOptions?: { url?: string | undefined } }): string {
  const queryStart = request.url.indexOf('?');
  const route = request.routeOptions?.url;
  const path = route && route.includes(':') ? route : queryStart === -1 ? request.url : request.url.slice(0, queryStart);
  if (queryStart === -1) return path;
  const query = request.url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq === -1) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {
        // An undecodable name is logged as sent.
      }
      return SECRET_PARAMETER.test(name) || PERSONAL_PARAMETER.test(name) ? `${pair.slice(0, eq)}=[redacted]` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

/** fastify's default request serializer, with {@link loggableUrl} in place of the raw URL. */
export function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: loggableUrl(request),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
