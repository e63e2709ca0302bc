import { hash, randomInt, timingSafeEqual } from 'node:crypto';

const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * A random string over an alphabet, drawn without modulo bias. better-auth's ids and session tokens are 32
 * alphanumeric characters: about 190 bits, beyond guessing.
 */
export function randomString(length: number, alphabet: string = ALPHANUMERIC): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export function generateId(): string {
  return randomString(32);
}

export function generateSessionToken(): string {
  return randomString(32);
}

/**
 * What is stored in place of a token: SHA-256, hex. A fast hash is enough because tokens carry ~190 bits of
 * entropy (no dictionary to try), and it lets a lookup by token stay an index probe.
 */
export function hashToken(token: string): string {
  // The one-shot form: about a third of createHash's cost, and it runs on every request with a session.
  return hash('sha256', token, 'hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * A session's id, derived from its token's hash: get-session can then find a session's own stream on the
 * log from the token alone, when no read model holds it. One-way like the hash, so an id shown to a
 * client or an auditor gives nothing towards the token.
 */
export function sessionIdForTokenHash(tokenHash: string): string {
  return hash('sha256', `portcullis/session-id/${tokenHash}`, 'hex').slice(0, 32);
}
