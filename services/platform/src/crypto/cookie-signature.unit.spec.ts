import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signCookieValue, unsignCookieValue } from './cookie-signature.ts';

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
