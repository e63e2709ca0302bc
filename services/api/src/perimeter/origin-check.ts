import type { FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '@portcullis/contracts';
import type { PerimeterPorts } from './ports.ts';
import { isTrustedOrigin, isTrustedRedirect } from '../http/trusted-origins.ts';
import { headerText as header, SAFE_METHODS } from '../http/request-headers.ts';

/**
 * Login CSRF (better-auth's formCsrfMiddleware) guards the routes that open a session from credentials in
 * the body: without it a cross-site form could sign the victim in to the attacker's account. better-auth's
 * username plugin leaves its sign-in out; it opens a session from credentials all the same, so it is here.
 */
const FORM_CSRF_ROUTES = new Set(['/sign-in/email', '/sign-up/email', '/sign-in/username']);

/** Every parameter a flow later redirects to, with better-auth's error for an untrusted value. */
const REDIRECT_PARAMETERS: ReadonlyArray<readonly [name: string, code: ErrorCode]> = [
  ['callbackURL', 'INVALID_CALLBACK_URL'],
  ['redirectTo', 'INVALID_REDIRECT_URL'],
  ['errorCallbackURL', 'INVALID_ERROR_CALLBACK_URL'],
  ['newUserCallbackURL', 'INVALID_NEW_USER_CALLBACK_URL'],
];

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** The callback a provider posts to (Apple): it decides nothing on a POST, it redirects to its own GET. */
const PROVIDER_CALLBACK = '/callback/:id';

/**
 * The perimeter against hostile origins (spec section 5; better-auth's origin-check middleware):
 * - a POST that carries cookies must come from a trusted origin (Origin, else Referer), since a browser
 *   attaches the cookies whoever made the page; requests without cookies (bearer clients, servers) carry no
 *   ambient authority and pass;
 * - sign-in and sign-up without cookies refuse a cross-site form navigation, and with Fetch Metadata or an
 *   Origin present they are held to the same origin rule;
 * - callbackURL, redirectTo, errorCallbackURL and newUserCallbackURL, in the body or the query and on every
 *   method, must be relative paths or on a trusted origin, or the answer becomes an open redirect.
 * It runs before body validation, as better-auth's does, so a forged request learns nothing about the schema.
 */
export function originCheck(ctx: PerimeterPorts): (request: FastifyRequest, route: string) => void {
  const { trustedOrigins } = ctx.config;
  const baseOrigin = new URL(ctx.config.baseUrl).origin;

  function requireTrustedOrigin(request: FastifyRequest): void {
    const origin = header(request, 'origin');
    let claimed = origin || header(request, 'referer');
    // A sandboxed or privacy-preserving same-origin request says "null"; Fetch Metadata vouches for it.
    if (origin === 'null' && header(request, 'sec-fetch-site') === 'same-origin') claimed = baseOrigin;
    if (!claimed || claimed === 'null') throw new DomainError('MISSING_OR_NULL_ORIGIN');
    if (!isTrustedOrigin(claimed, trustedOrigins)) {
      request.log.info({ origin: claimed.slice(0, 200) }, 'refused a request from an untrusted origin');
      throw new DomainError('INVALID_ORIGIN');
    }
  }

  function checkLoginCsrf(request: FastifyRequest): void {
    const site = header(request, 'sec-fetch-site');
    const mode = header(request, 'sec-fetch-mode');
    const dest = header(request, 'sec-fetch-dest');
    if (site || mode || dest) {
      if (site === 'cross-site' && mode === 'navigate') {
        request.log.info({ site, mode, dest }, 'refused a cross-site navigation login');
        throw new DomainError('CROSS_SITE_NAVIGATION_LOGIN_BLOCKED');
      }
      requireTrustedOrigin(request);
      return;
    }
    // No Fetch Metadata: an old browser or a server. Check what it does say; a bare server call passes.
    if (header(request, 'origin') || header(request, 'referer')) requireTrustedOrigin(request);
  }

  function checkRedirects(where: 'body' | 'query', source: Record<string, unknown> | null): void {
    if (!source) return;
    for (const [name, code] of REDIRECT_PARAMETERS) {
      const value = source[name];
      if (value === undefined || value === null || value === '') continue;
      if (typeof value !== 'string') {
        throw new DomainError(where === 'body' ? 'VALIDATION_ERROR' : 'INVALID_QUERY_PARAMETERS', {
          details: `[${where}.${name}] Invalid ${name === 'redirectTo' ? 'redirectURL' : name}: expected a string`,
        });
      }
      if (!isTrustedRedirect(value, trustedOrigins)) throw new DomainError(code);
    }
  }

  return (request, route) => {
    // A provider's form_post comes from the provider's origin; the callback only turns it into a GET of itself.
    if (!SAFE_METHODS.has(request.method) && route !== PROVIDER_CALLBACK) {
      // What the checks below decide on; never the cookie itself, only whether there is one.
      request.log.debug(
        {
          origin: header(request, 'origin').slice(0, 200) || null,
          referer: header(request, 'referer') ? 'present' : null,
          secFetchSite: header(request, 'sec-fetch-site') || null,
          secFetchMode: header(request, 'sec-fetch-mode') || null,
          cookies: request.headers.cookie !== undefined,
        },
        'origin check',
      );
      if (request.headers.cookie !== undefined) requireTrustedOrigin(request);
      else if (FORM_CSRF_ROUTES.has(route)) checkLoginCsrf(request);
    }
    checkRedirects('body', asRecord(request.body));
    checkRedirects('query', asRecord(request.query));
  };
}
