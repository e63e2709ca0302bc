import { createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { constantTimeEqual } from './tokens.ts';

/**
 * better-auth's signed cookie value: `value.signature`, where the signature is HMAC-SHA256 keyed with the
 * secret's UTF-8 bytes, in standard base64 with padding (always 44 characters, ending in '=').
 */
export function signCookieValue(value: string, secret: string): string {
  return `${value}.${sign(value, secret)}`;
}

/**
 * Signed values already verified, per secret: a session cookie is presented on every request of its
 * session, and an HMAC key setup per request is most of what reading it costs. Only values whose signature
 * checked out are kept, and a hit needs the exact signed string, so the memo cannot admit a forgery.
 */
const verifiedBySecret = new Map<string, LRUCache<string, string>>();
const VERIFIED_MAX_ENTRIES = 10_000;

/** The value inside a signed cookie, or null when the signature is missing or wrong. */
export function unsignCookieValue(signed: string, secret: string): string | null {
  let verified = verifiedBySecret.get(secret);
  const known = verified?.get(signed);
  if (known !== undefined) return known;
  const dot = signed.lastIndexOf('.');
  if (dot < 1) return null;
  const value = signed.slice(0, dot);
  const signature = signed.slice(dot + 1);
  if (signature.length !== 44 || !signature.endsWith('=')) return null;
  if (!constantTimeEqual(signature, sign(value, secret))) return null;
  if (!verified) verifiedBySecret.set(secret, (verified = new LRUCache<string, string>({ max: VERIFIED_MAX_ENTRIES })));
  verified.set(signed, value);
  return value;
}

function sign(value: string, secret: string): string {
  return createHmac('sha256', secret).update(value, 'utf8').digest('base64');
}
