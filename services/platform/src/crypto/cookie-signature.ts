import { createHmac } from 'node:crypto';
import { constantTimeEqual } from './tokens.ts';

/**
 * better-auth's signed cookie value: `value.signature`, where the signature is HMAC-SHA256 keyed with the
 * secret's UTF-8 bytes, in standard base64 with padding (always 44 characters, ending in '=').
 */
export function signCookieValue(value: string, secret: string): string {
  return `${value}.${sign(value, secret)}`;
}

/** The value inside a signed cookie, or null when the signature is missing or wrong. */
export function unsignCookieValue(signed: string, secret: string): string | null {
  const dot = signed.lastIndexOf('.');
  if (dot < 1) return null;
  const value = signed.slice(0, dot);
  const signature = signed.slice(dot + 1);
  if (signature.length !== 44 || !signature.endsWith('=')) return null;
  return constantTimeEqual(signature, sign(value, secret)) ? value : null;
}

function sign(value: string, secret: string): string {
  return createHmac('sha256', secret).update(value, 'utf8').digest('base64');
}
