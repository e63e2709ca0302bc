import { describe, expect, it } from 'vitest';
import { loadConfig } from '@portcullis/platform';
import { sessionCookieSettings } from './session-cookies.ts';

const base = { DATABASE_URL: 'postgres://localhost/db', AUTH_SECRET: 'x'.repeat(32) };

describe('session cookie settings', () => {
  it("names cookies `__Secure-` exactly when they are secure, as better-auth's useSecureCookies does", () => {
    const plain = sessionCookieSettings(loadConfig(base));
    expect(plain.names.sessionToken).toBe('better-auth.session_token');
    expect(plain.attributes).toEqual({ path: '/', httpOnly: true, sameSite: 'lax', secure: false, encode: encodeURIComponent });

    const https = sessionCookieSettings(loadConfig({ ...base, BASE_URL: 'https://auth.example.com' }));
    expect(Object.values(https.names).every((name) => name.startsWith('__Secure-better-auth.'))).toBe(true);
    expect(https.attributes.secure).toBe(true);

    // Turned off on https, the prefix goes too: a browser refuses a `__Secure-` cookie without Secure.
    const off = sessionCookieSettings(loadConfig({ ...base, BASE_URL: 'https://auth.example.com', AUTH_COOKIE_SECURE: 'false' }));
    expect(off.names.sessionData).toBe('better-auth.session_data');
    expect(off.attributes.secure).toBe(false);
  });

  it('carries SameSite and the Domain on every cookie', () => {
    const settings = sessionCookieSettings(
      loadConfig({ ...base, BASE_URL: 'https://auth.example.com', AUTH_COOKIE_DOMAIN: 'example.com', AUTH_COOKIE_SAME_SITE: 'none' }),
    );
    expect(settings.attributes).toMatchObject({ sameSite: 'none', secure: true, domain: 'example.com' });
  });
});
