/**
 * Which origins and URLs the api trusts: better-auth's rules (src/auth/trusted-origins.ts,
 * matchesOriginPattern), reimplemented. The list is BASE_URL's origin plus TRUSTED_ORIGINS, whose entries are
 * exact origins, wildcard patterns (`https://*.example.com`, or `*.example.com` for any scheme) or app
 * schemes (`myapp://`).
 */

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
const ENCODED_PATH_SEPARATOR = /%2[fF]|%5[cC]/;
const PROBE_ORIGIN = 'https://portcullis.invalid';
/** A host pattern of digits, dots and wildcards names an IPv4 range, and so admits only IPv4 addresses. */
const IP_WILDCARD_HOST = /^(?=.*\d)[\d*?.]+$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * A path on this site, not a way off it: `//evil.example` and `/\evil.example` are network-path references
 * that browsers resolve to another host, and encoded separators or control characters can smuggle the same
 * past a router (RFC 3986 section 4.2; WHATWG URL parser). Nor may its dot segments resolve to one:
 * `/..//evil.example` and `/%2e%2e//evil.example` are paths here, but whatever normalizes them (a URL
 * builder, a client's router) makes `//evil.example` of them.
 */
export function isSafeRelativePath(url: string): boolean {
  if (!url.startsWith('/') || url.startsWith('//') || url.includes('\\') || CONTROL_CHARACTER.test(url)) return false;
  const pathEnd = url.search(/[?#]/);
  if (ENCODED_PATH_SEPARATOR.test(pathEnd === -1 ? url : url.slice(0, pathEnd))) return false;
  try {
    const resolved = new URL(url, PROBE_ORIGIN);
    return resolved.origin === PROBE_ORIGIN && !resolved.pathname.startsWith('//');
  } catch {
    return false;
  }
}

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** `*` matches any run of characters, `?` any one; everything else literally. */
function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const char of glob) {
    if (char === '*') source += '.*?';
    else if (char === '?') source += '.';
    else source += char.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'i');
}

function allowedIPv4Host(patternAuthority: string, authority: string): boolean {
  const patternHost = patternAuthority.split(':')[0] ?? '';
  if (!IP_WILDCARD_HOST.test(patternHost)) return true;
  return IPV4.test(authority.split(':')[0] ?? '');
}

/** Scheme, authority and dot-segment-resolved path of an app-scheme URL, without trusting `new URL` on it. */
function splitCustomScheme(value: string): { scheme: string; authority: string; path: string } | null {
  if (CONTROL_CHARACTER.test(value)) return null;
  const schemeEnd = value.indexOf(':');
  if (schemeEnd <= 0) return null;
  let rest = value.slice(schemeEnd + 1);
  let authority = '';
  if (rest.startsWith('//')) {
    rest = rest.slice(2);
    const end = rest.search(/[/?#]/);
    authority = end === -1 ? rest : rest.slice(0, end);
    rest = end === -1 ? '' : rest.slice(end);
  }
  const pathEnd = rest.search(/[?#]/);
  let path = pathEnd === -1 ? rest : rest.slice(0, pathEnd);
  try {
    path = decodeURIComponent(path);
  } catch {
    // Keep it encoded: it then matches only literally.
  }
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '..') segments.pop();
    else if (segment !== '.' && segment !== '') segments.push(segment);
  }
  return {
    scheme: value.slice(0, schemeEnd).toLowerCase(),
    authority: authority.toLowerCase(),
    path: segments.length > 0 ? `/${segments.join('/')}` : '',
  };
}

/** Whether `url` (an absolute URL or an origin) falls under one trusted-origins entry. */
export function matchesOriginPattern(url: string, pattern: string): boolean {
  const wildcard = /[*?]/.test(pattern);
  if (wildcard && !pattern.includes('://')) {
    const host = parse(url)?.host;
    return host !== undefined && host !== '' && globToRegExp(pattern).test(host) && allowedIPv4Host(pattern, host);
  }
  const parsed = parse(url);
  const protocol = parsed?.protocol ?? null;
  if (protocol === 'http:' || protocol === 'https:' || protocol === null) {
    const origin = parsed && parsed.origin !== 'null' ? parsed.origin : null;
    if (origin === null) return false;
    if (!wildcard) return pattern.toLowerCase() === origin;
    const schemeEnd = pattern.indexOf('://') + 3;
    return globToRegExp(pattern).test(origin) && allowedIPv4Host(pattern.slice(schemeEnd), origin.slice(origin.indexOf('://') + 3));
  }
  const target = splitCustomScheme(url);
  const allowed = splitCustomScheme(pattern);
  if (!target || !allowed || target.scheme !== allowed.scheme) return false;
  if (wildcard) {
    if (target.authority.includes('@')) return false;
    if (allowed.authority && !globToRegExp(allowed.authority).test(target.authority)) return false;
    return !allowed.path || globToRegExp(allowed.path).test(target.path || '/');
  }
  if (allowed.authority && target.authority !== allowed.authority) return false;
  return !allowed.path || target.path === allowed.path || target.path.startsWith(`${allowed.path}/`);
}

/**
 * Whether a redirect or callback URL may be followed: a safe relative path, or an absolute URL on a
 * trusted origin. Never one with control characters: the URL parser drops tabs and newlines wherever they
 * are, so what was checked and what a client follows could differ.
 */
export function isTrustedRedirect(url: string, trustedOrigins: readonly string[]): boolean {
  if (CONTROL_CHARACTER.test(url)) return false;
  if (url.startsWith('/')) return isSafeRelativePath(url);
  return trustedOrigins.some((pattern) => matchesOriginPattern(url, pattern));
}

/** Whether a request's Origin (or Referer) is one the api accepts cookie-carrying writes from. */
export function isTrustedOrigin(origin: string, trustedOrigins: readonly string[]): boolean {
  if (origin.startsWith('/')) return false;
  return trustedOrigins.some((pattern) => matchesOriginPattern(origin, pattern));
}
