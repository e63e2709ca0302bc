import { isIP } from 'node:net';

/**
 * Parsers for the perimeter's settings (trusted origins, trusted proxies, rate-limit rules). Pure functions
 * over strings, so config.ts can refuse a bad value at start with a message naming what is wrong; config.ts
 * stays the only reader of the environment.
 */

export interface RateLimit {
  /** Seconds. */
  readonly window: number;
  readonly max: number;
}

/**
 * One per-path rule. `path` is relative to the auth base path; a trailing `*` makes it a prefix
 * (`/sign-in*` covers `/sign-in/email` and `/sign-in/username`). `limit: null` turns limiting off there.
 */
export interface RateLimitRule {
  readonly path: string;
  readonly limit: RateLimit | null;
}

/**
 * better-auth's special rules (src/api/rate-limiter: getDefaultSpecialRules): 3 per 10 s where credentials
 * are guessed or changed, 3 per 60 s where mail is sent.
 */
export const defaultRateLimitRules: readonly RateLimitRule[] = [
  ...['/sign-in*', '/sign-up*', '/change-password*', '/change-email*'].map((path) => ({ path, limit: { window: 10, max: 3 } })),
  ...[
    '/request-password-reset',
    '/send-verification-email',
    '/forget-password*',
    '/email-otp/send-verification-otp',
    '/email-otp/request-password-reset',
  ].map((path) => ({ path, limit: { window: 60, max: 3 } })),
];

/** What a list parser accepted, and what is wrong with the rest (one message per bad entry). */
export interface ParsedList<T> {
  readonly values: T[];
  readonly problems: string[];
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

const CUSTOM_SCHEME_ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^\s,]*$/i;
const ONLY_WILDCARDS = /^[*?.]*$/;

/**
 * TRUSTED_ORIGINS: exact origins (`https://app.example.com`, `http://localhost:5173`), wildcard patterns
 * (`https://*.example.com`, or a bare host pattern `*.example.com` for any scheme), and app schemes
 * (`myapp://`). Anything with a path, or a pattern that is nothing but wildcards, is refused: a typo here
 * silently widens who may send the browser's cookies.
 */
export function parseTrustedOrigins(value: string): ParsedList<string> {
  const origins: string[] = [];
  const problems: string[] = [];
  for (const raw of splitList(value)) {
    // `https://app.example.com/` is how many people write an origin; an app scheme (`myapp://`) keeps its slashes.
    const entry = /^https?:\/\/[^/]/i.test(raw) ? raw.replace(/\/+$/, '') : raw;
    const wildcard = /[*?]/.test(entry);
    const schemeEnd = entry.indexOf('://');
    const scheme = schemeEnd > 0 ? entry.slice(0, schemeEnd).toLowerCase() : null;
    const authority = schemeEnd > 0 ? entry.slice(schemeEnd + 3) : entry;
    if (wildcard) {
      const host = authority.split(':')[0] ?? '';
      if (ONLY_WILDCARDS.test(host)) problems.push(`'${raw}' would trust every host; name a domain (https://*.example.com)`);
      else if (authority.includes('/') || /\s/.test(authority)) problems.push(`'${raw}' must not have a path`);
      else origins.push(scheme ? `${scheme}://${authority.toLowerCase()}` : authority.toLowerCase());
      continue;
    }
    if (scheme === 'http' || scheme === 'https') {
      let origin: string | null = null;
      try {
        origin = new URL(entry).origin;
      } catch {
        origin = null;
      }
      if (origin && origin.toLowerCase() === entry.toLowerCase()) origins.push(origin);
      else problems.push(`'${raw}' is not an origin (scheme://host[:port], no path)`);
      continue;
    }
    if (scheme && CUSTOM_SCHEME_ORIGIN.test(raw)) {
      origins.push(raw);
      continue;
    }
    problems.push(`'${raw}' is neither an origin (https://app.example.com) nor a pattern (https://*.example.com)`);
  }
  return { values: origins, problems };
}

const PROXY_KEYWORDS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * AUTH_TRUSTED_PROXIES: addresses or CIDR ranges of the proxies in front of the api (or the keywords
 * loopback, linklocal, uniquelocal). Only hops from these are believed when they forward a client address
 * in X-Forwarded-For; without any, the socket's peer is the client and the header is ignored, so a client
 * cannot pick its own rate-limit bucket.
 */
export function parseTrustedProxies(value: string): ParsedList<string> {
  const proxies: string[] = [];
  const problems: string[] = [];
  for (const entry of splitList(value)) {
    if (PROXY_KEYWORDS.has(entry)) {
      proxies.push(entry);
      continue;
    }
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra !== undefined) problems.push(`'${entry}' is not an IP address or CIDR range`);
    else proxies.push(entry);
  }
  return { values: proxies, problems };
}

/**
 * AUTH_RATE_LIMIT_RULES: `path=max/window` or `path=off`, comma-separated, e.g.
 * `/sign-in/email=10/60,/get-session=off,/organization/*=50/10`. These come before the defaults, and the
 * first rule whose path matches wins.
 */
export function parseRateLimitRules(value: string): ParsedList<RateLimitRule> {
  const rules: RateLimitRule[] = [];
  const problems: string[] = [];
  for (const entry of splitList(value)) {
    const match = /^(\/[^=\s*]*\*?)=(?:(off)|(\d+)\/(\d+))$/.exec(entry);
    if (!match) {
      problems.push(`'${entry}' must be path=max/windowSeconds or path=off (e.g. /sign-in/email=10/60)`);
      continue;
    }
    const [, path = '', off, max, window] = match;
    if (off) {
      rules.push({ path, limit: null });
      continue;
    }
    const limit = { max: Number(max), window: Number(window) };
    if (limit.max < 1 || limit.window < 1) problems.push(`'${entry}': max and window must be at least 1`);
    else rules.push({ path, limit });
  }
  return { values: rules, problems };
}

/** Whether a rule's path (exact, or a prefix ending in `*`) covers `path`. */
export function rulePathMatches(rulePath: string, path: string): boolean {
  return rulePath.endsWith('*') ? path.startsWith(rulePath.slice(0, -1)) : path === rulePath;
}
