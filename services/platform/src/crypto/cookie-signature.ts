import { createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { secretsOf, type SecretRing } from './secret-ring.ts';
import { constantTimeEqual } from './tokens.ts';

/**
 * better-auth's signed cookie value: `value.signature`, where the signature is HMAC-SHA256 keyed with the
 * secret's UTF-8 bytes, in standard base64 with padding (always 44 characters, ending in '='). Signed with
 * the ring's newest secret.
 */
export function signCookieValue(value: string, ring: SecretRing): string {
  return `${value}.${sign(value, secretsOf(ring)[0]!)}`;
}

/** A signed value that verified, and the secret of the ring whose signature it carries. */
export interface OpenedCookie {
  readonly value: string;
  readonly secret: string;
  /** Signed with the ring's newest secret; otherwise a caller may sign it again with the newest. */
  readonly byNewest: boolean;
}

/**
 * Signed values already verified, with the secret that verified them: a session cookie is presented on every
 * request of its session, and an HMAC key setup per request is most of what reading it costs. Only values
 * whose signature checked out are kept, a hit needs the exact signed string, and it counts only while the
 * secret that verified it is in the ring asked with: the memo cannot admit a forgery, nor a secret dropped.
 */
const verified = new LRUCache<string, { readonly value: string; readonly secret: string }>({ max: 10_000 });

/** The value inside a signed cookie and the secret that signed it, or null when no secret of the ring did. */
export function openSignedCookie(signed: string, ring: SecretRing): OpenedCookie | null {
  const secrets = secretsOf(ring);
  const known = verified.get(signed);
  if (known !== undefined) {
    if (known.secret === secrets[0]) return { value: known.value, secret: known.secret, byNewest: true };
    if (secrets.includes(known.secret)) return { value: known.value, secret: known.secret, byNewest: false };
  }
  const dot = signed.lastIndexOf('.');
  if (dot < 1) return null;
  const value = signed.slice(0, dot);
  const signature = signed.slice(dot + 1);
  if (signature.length !== 44 || !signature.endsWith('=')) return null;
  // Newest first: after a rotation's roll-out most cookies carry its signature, so one HMAC settles them.
  for (const [index, secret] of secrets.entries()) {
    if (!constantTimeEqual(signature, sign(value, secret))) continue;
    verified.set(signed, { value, secret });
    return { value, secret, byNewest: index === 0 };
  }
  return null;
}

/** The value inside a signed cookie, or null when the signature is missing or no secret of the ring made it. */
export function unsignCookieValue(signed: string, ring: SecretRing): string | null {
  return openSignedCookie(signed, ring)?.value ?? null;
}

function sign(value: string, secret: string): string {
  return createHmac('sha256', secret).update(value, 'utf8').digest('base64');
}
