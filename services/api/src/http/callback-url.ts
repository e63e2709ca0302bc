import { DomainError } from '@portcullis/contracts';

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
const ENCODED_PATH_SEPARATOR = /%2[fF]|%5[cC]/;
const PROBE_ORIGIN = 'https://portcullis.invalid';

/**
 * A path on this site, not a way off it: `//evil.example` and `/\evil.example` are network-path references
 * that browsers resolve to another host, and encoded or control characters can smuggle the same. The rule
 * is better-auth's `isSafeRelativeURL` (src/auth/trusted-origins.ts).
 */
function isSafeRelativePath(url: string): boolean {
  if (!url.startsWith('/') || url.startsWith('//') || url.includes('\\') || CONTROL_CHARACTER.test(url)) return false;
  const pathEnd = url.search(/[?#]/);
  if (ENCODED_PATH_SEPARATOR.test(pathEnd === -1 ? url : url.slice(0, pathEnd))) return false;
  try {
    return new URL(url, PROBE_ORIGIN).origin === PROBE_ORIGIN;
  } catch {
    return false;
  }
}

/**
 * Spec section 5: callback URLs must be relative paths or on a trusted origin, else the request is refused
 * as forbidden. Without this the sign-in answer (`url`, `Location`) is an open redirect to any site.
 */
export function checkCallbackURL(url: string | undefined, trustedOrigins: readonly string[]): void {
  if (!url) return;
  if (url.startsWith('/')) {
    if (isSafeRelativePath(url)) return;
  } else {
    try {
      if (trustedOrigins.includes(new URL(url).origin)) return;
    } catch {
      // Not a URL at all: refused below.
    }
  }
  throw new DomainError('INVALID_CALLBACK_URL');
}
