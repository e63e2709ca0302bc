import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSignedCookie, signCookieValue, unsignCookieValue } from './cookie-signature.ts';

const SECRET = 'cookie-signature-secret-0123456789abcdef';

describe('signed cookie values', () => {
  it("signs as better-auth does: value, '.', base64 HMAC-SHA256 of 44 characters", () => {
    const signed = signCookieValue('token123', SECRET);
    expect(signed).toBe(`token123.${createHmac('sha256', SECRET).update('token123').digest('base64')}`);
    expect(signed.split('.')[1]).toHaveLength(44);
    expect(unsignCookieValue(signed, SECRET)).toBe('token123');
  });

  it('refuses a forged or foreign signature, also once the genuine value has been read before', () => {
    const signed = signCookieValue('session-token', SECRET);
    expect(unsignCookieValue(signed, SECRET)).toBe('session-token');
    expect(unsignCookieValue(signed, SECRET)).toBe('session-token');
    const signature = signed.slice(signed.lastIndexOf('.') + 1);
    const tampered = `session-token.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect(unsignCookieValue(tampered, SECRET)).toBeNull();
    expect(unsignCookieValue(`other-token.${signature}`, SECRET)).toBeNull();
    expect(unsignCookieValue(signed, `${SECRET}-rotated`)).toBeNull();
    expect(unsignCookieValue('session-token', SECRET)).toBeNull();
    expect(unsignCookieValue('', SECRET)).toBeNull();
  });
});

describe('signed cookie values under a ring of secrets', () => {
  const NEWEST = 'the-newest-secret-of-the-ring-0123456789';
  const OLDER = 'an-older-secret-of-the-ring-0123456789ab';

  it('signs with the newest and accepts any secret of the ring, saying which', () => {
    const ring = [NEWEST, OLDER];
    expect(signCookieValue('token', ring)).toBe(signCookieValue('token', NEWEST));
    expect(openSignedCookie(signCookieValue('token', NEWEST), ring)).toEqual({ value: 'token', secret: NEWEST, byNewest: true });
    const underOlder = signCookieValue('token', OLDER);
    expect(openSignedCookie(underOlder, ring)).toEqual({ value: 'token', secret: OLDER, byNewest: false });
    // Verified before (kept in the memo) under a ring that held its secret: still answered as the older one's.
    expect(openSignedCookie(underOlder, ring)).toEqual({ value: 'token', secret: OLDER, byNewest: false });
  });

  it('refuses a value whose secret was dropped from the ring, also once it had been verified', () => {
    const underOlder = signCookieValue('kept-token', OLDER);
    expect(unsignCookieValue(underOlder, [NEWEST, OLDER])).toBe('kept-token');
    expect(unsignCookieValue(underOlder, [NEWEST])).toBeNull();
    expect(unsignCookieValue(underOlder, ['a-third-secret-nobody-signed-with-01234'])).toBeNull();
  });

  it('refuses a ring of none', () => {
    expect(() => signCookieValue('token', [])).toThrow(TypeError);
  });
});
