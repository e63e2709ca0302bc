import { z } from 'zod';
import { baseUrlOf, type CoreValues } from './core.ts';
import { flag, MAX_COOKIE_AGE_SECONDS, seconds, section, setting } from './settings.ts';

export const cookieSameSites = ['lax', 'strict', 'none'] as const;
export type CookieSameSite = (typeof cookieSameSites)[number];

/** A host name a Domain attribute may name: labels of letters, digits and hyphens (a leading dot is allowed and dropped). */
const COOKIE_DOMAIN = /^\.?(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*$/;

/**
 * Secure cookies (and their `__Secure-` names) unless told otherwise: as better-auth's `useSecureCookies`,
 * which defaults to whether the base URL is https.
 */
export function cookiesSecure(c: { readonly AUTH_COOKIE_SECURE?: boolean | undefined }, core: CoreValues): boolean {
  return c.AUTH_COOKIE_SECURE ?? baseUrlOf(core).startsWith('https://');
}

/**
 * Whether AUTH_COOKIE_DOMAIN covers BASE_URL's host (browsers drop a cookie whose Domain does not); a value
 * that is no host name at all is its own problem, reported by its schema.
 */
export function cookieDomainCoversBaseUrl(c: { readonly AUTH_COOKIE_DOMAIN?: string | undefined }, core: CoreValues): boolean {
  if (c.AUTH_COOKIE_DOMAIN === undefined || !COOKIE_DOMAIN.test(c.AUTH_COOKIE_DOMAIN)) return true;
  const domain = cookieDomainOf(c.AUTH_COOKIE_DOMAIN);
  const host = new URL(baseUrlOf(core)).hostname.toLowerCase();
  return host === domain || host.endsWith(`.${domain}`);
}

/** The Domain attribute as written on cookies: lower case, without the leading dot RFC 6265 ignores. */
export function cookieDomainOf(value: string | undefined): string | null {
  return value === undefined ? null : value.replace(/^\./, '').toLowerCase();
}

/** Sessions, their cookies, and the caches get-session answers from. */
export const sessionSettings = section(
  'Sessions',
  {
    AUTH_SESSION_EXPIRES_IN: setting(
      seconds(7 * 24 * 3600).pipe(z.number().max(MAX_COOKIE_AGE_SECONDS, 'cookie max age above 400 days')),
      'session lifetime, seconds (at most 400 days)',
    ),
    AUTH_SESSION_UPDATE_AGE: setting(seconds(24 * 3600), 'a session older than this since its last refresh gets a new lifetime'),
    AUTH_SESSION_FRESH_AGE: setting(seconds(24 * 3600), 'sessions younger than this are fresh (0 turns the check off)'),
    AUTH_COOKIE_PREFIX: setting(z.string().regex(/^[A-Za-z0-9_.-]+$/).default('better-auth'), 'cookie name prefix'),
    AUTH_COOKIE_DOMAIN: setting(
      z.string().regex(COOKIE_DOMAIN, 'must be a host name such as example.com').optional(),
      'the `Domain` of every cookie the api sets, so apps on its subdomains get them too (better-auth\'s `crossSubDomainCookies`); `BASE_URL`\'s host or a parent of it (`example.com` for `auth.example.com`)',
      'none: cookies for `BASE_URL`\'s host alone',
    ),
    AUTH_COOKIE_SAME_SITE: setting(
      z.enum(cookieSameSites).default('lax'),
      '`SameSite` of every cookie the api sets: `lax`, `strict`, or `none` for an app on another site (needs secure cookies: an https `BASE_URL` or `AUTH_COOKIE_SECURE=true`)',
    ),
    AUTH_COOKIE_SECURE: setting(
      z
        .enum(['true', 'false', '1', '0'])
        .optional()
        .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1')),
      'secure cookies, named with the `__Secure-` prefix (better-auth\'s `useSecureCookies`)',
      'whether `BASE_URL` is https',
    ),
    AUTH_COOKIE_CACHE_ENABLED: setting(flag(false), 'the signed `session_data` cookie cache'),
    AUTH_COOKIE_CACHE_MAX_AGE: setting(
      z.coerce.number().int().min(1).default(60).pipe(z.number().max(MAX_COOKIE_AGE_SECONDS, 'cookie max age above 400 days')),
      'lifetime of the `session_data` cookie cache, seconds (at most 400 days)',
    ),
    AUTH_SESSION_LOCAL_CACHE: setting(
      flag(true),
      'with Redis: get-session answers from entries held in the api process, dropped the moment Redis reports their key changed (`CLIENT TRACKING ... BCAST`); while that channel is down every read goes to Redis (off with a cluster)',
    ),
    AUTH_SESSION_LOCAL_CACHE_MAX_ENTRIES: setting(z.coerce.number().int().min(1).default(100_000), 'entries the api process holds at most'),
    AUTH_READ_YOUR_WRITES_TIMEOUT_MS: setting(
      z.coerce.number().int().positive().default(5000),
      'how long a write waits for the read models before answering anyway',
    ),
    AUTH_SESSION_READ_MAX_LAG_MS: setting(
      z.coerce.number().int().min(100).max(60_000).default(1000),
      'how far behind the log a read model may be and still be believed that a session is live; the longest a revocation waits when the projector is stuck',
    ),
  },
  (c, core) => ({
    redis: core.REDIS_URL
      ? {
          url: core.REDIS_URL,
          keyPrefix: core.REDIS_KEY_PREFIX,
          /** Entries the api keeps in process (0: none, every get-session reads Redis). */
          localSessionCacheEntries: c.AUTH_SESSION_LOCAL_CACHE ? c.AUTH_SESSION_LOCAL_CACHE_MAX_ENTRIES : 0,
        }
      : null,
    session: {
      expiresInSeconds: c.AUTH_SESSION_EXPIRES_IN,
      updateAgeSeconds: c.AUTH_SESSION_UPDATE_AGE,
      freshAgeSeconds: c.AUTH_SESSION_FRESH_AGE,
    },
    cookiePrefix: c.AUTH_COOKIE_PREFIX,
    /** The attributes of every cookie the api sets and clears (better-auth's `advanced` cookie options). */
    cookie: {
      secure: cookiesSecure(c, core),
      sameSite: c.AUTH_COOKIE_SAME_SITE,
      domain: cookieDomainOf(c.AUTH_COOKIE_DOMAIN),
    },
    /** The signed `session_data` cookie get-session may answer from. */
    cookieCache: { enabled: c.AUTH_COOKIE_CACHE_ENABLED, maxAgeSeconds: c.AUTH_COOKIE_CACHE_MAX_AGE },
    readYourWritesTimeoutMs: c.AUTH_READ_YOUR_WRITES_TIMEOUT_MS,
    /** A read model further behind the log than this is not believed when it says a session is live. */
    sessionReadMaxLagMs: c.AUTH_SESSION_READ_MAX_LAG_MS,
  }),
);
