import { validateHeaderValue } from 'node:http';
import type { FastifyReply } from 'fastify';
import { DomainError, type ErrorCode } from '@portcullis/contracts';
import { isTrustedRedirect } from './trusted-origins.ts';

/** A Location the server may send: built by {@link redirectLocation}, and checked as it is sent. */
export type SentLocation = string & { readonly __sentLocation: unique symbol };

/** Anything that is not printable ASCII: a header carries bytes, and a URL only these. */
const NOT_PRINTABLE_ASCII = /[^\x21-\x7e]/gu;

/**
 * The URL with `params` appended, as better-auth's appendQueryParams does it, but without re-serializing a
 * relative path: `new URL` resolves dot segments, so `/..//evil.test` came out as `//evil.test?error=…`, a
 * network-path reference to another host, from a value that was a path on this site when it was checked. A
 * relative URL keeps its path as given, and the parameters go before its fragment. An absolute one is sent
 * as the URL parser serializes it: the form its origin was checked in (trimmed, tabs and newlines dropped).
 */
function withQueryParams(url: string, params: Readonly<Record<string, string>>): string {
  if (!url.startsWith('/')) {
    const parsed = new URL(url);
    for (const [name, value] of Object.entries(params)) parsed.searchParams.append(name, value);
    return parsed.href;
  }
  const query = new URLSearchParams(params).toString();
  if (query === '') return url;
  const hashAt = url.indexOf('#');
  const [beforeHash, hash] = hashAt === -1 ? [url, ''] : [url.slice(0, hashAt), url.slice(hashAt)];
  const separator = !beforeHash.includes('?') ? '?' : beforeHash.endsWith('?') || beforeHash.endsWith('&') ? '' : '&';
  return `${beforeHash}${separator}${query}${hash}`;
}

/**
 * Percent-encodes what a header cannot carry as text: characters outside Latin-1 make Node refuse the header
 * (ERR_INVALID_CHAR, a 500 after the work was done), and Latin-1 ones would go out as bytes browsers read as
 * UTF-8. Each becomes its UTF-8 bytes percent-encoded, which is what a browser sends for the same URL.
 */
function encodeForHeader(url: string): string {
  return url.replace(NOT_PRINTABLE_ASCII, (char) => encodeURIComponent(char));
}

/**
 * The Location a redirect to `url` sends (a callback URL, with `params` appended: `error=invalid_token`):
 * encoded for the header, and checked again as it will be sent, since the check of the value given says
 * nothing of what building and encoding made of it. It must still be a safe relative path (resolved against
 * the page it is sent from, it stays on that page's origin) or on a trusted origin; otherwise the redirect is
 * refused with `code`. Build it before anything is appended, so a refusal leaves nothing behind.
 */
export function redirectLocation(
  url: string,
  trustedOrigins: readonly string[],
  options: { readonly params?: Readonly<Record<string, string>>; readonly code?: ErrorCode } = {},
): SentLocation {
  const code = options.code ?? 'INVALID_CALLBACK_URL';
  let sent: string;
  try {
    sent = encodeForHeader(withQueryParams(url, options.params ?? {}));
    validateHeaderValue('location', sent);
  } catch (error) {
    // Not a URL (an absolute one the parser refuses), or text that cannot be encoded (a lone surrogate).
    throw new DomainError(code, { cause: error });
  }
  if (!isTrustedRedirect(sent, trustedOrigins)) throw new DomainError(code);
  return sent as SentLocation;
}

/** better-call's `ctx.redirect`: 302 with the Location and an empty body. */
export function redirect(reply: FastifyReply, location: SentLocation): FastifyReply {
  return reply.status(302).header('location', location).send();
}
