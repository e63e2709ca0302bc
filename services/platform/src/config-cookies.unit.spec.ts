import { describe, expect, it } from 'vitest';
import { loadConfig } from './config/index.ts';
import { configProblems as problems, minimalEnv as base } from './config.test-support.ts';

describe("cookie settings (better-auth's advanced cookie options)", () => {
  it('defaults to host-only Lax cookies, secure exactly when BASE_URL is https', () => {
    expect(loadConfig(base).cookie).toEqual({ secure: false, sameSite: 'lax', domain: null });
    expect(loadConfig({ ...base, BASE_URL: 'https://auth.example.com' }).cookie).toEqual({ secure: true, sameSite: 'lax', domain: null });
  });

  it('takes AUTH_COOKIE_SECURE over the default either way (useSecureCookies)', () => {
    expect(loadConfig({ ...base, AUTH_COOKIE_SECURE: 'true' }).cookie.secure).toBe(true);
    expect(loadConfig({ ...base, BASE_URL: 'https://auth.example.com', AUTH_COOKIE_SECURE: 'false' }).cookie.secure).toBe(false);
    expect(problems({ AUTH_COOKIE_SECURE: 'yes' })).toEqual([expect.stringMatching(/^AUTH_COOKIE_SECURE: /)]);
  });

  it('takes lax, strict or none, and refuses none without secure cookies, saying what to change', () => {
    expect(loadConfig({ ...base, AUTH_COOKIE_SAME_SITE: 'strict' }).cookie.sameSite).toBe('strict');
    expect(loadConfig({ ...base, BASE_URL: 'https://auth.example.com', AUTH_COOKIE_SAME_SITE: 'none' }).cookie).toMatchObject({ sameSite: 'none', secure: true });
    expect(loadConfig({ ...base, AUTH_COOKIE_SAME_SITE: 'none', AUTH_COOKIE_SECURE: 'true' }).cookie).toMatchObject({ sameSite: 'none', secure: true });
    expect(problems({ AUTH_COOKIE_SAME_SITE: 'None' })).toEqual([expect.stringMatching(/^AUTH_COOKIE_SAME_SITE: /)]);
    expect(problems({ AUTH_COOKIE_SAME_SITE: 'none' })).toEqual([
      'AUTH_COOKIE_SAME_SITE: none needs secure cookies (browsers drop a SameSite=None cookie without Secure): serve BASE_URL over https or set AUTH_COOKIE_SECURE=true',
    ]);
    expect(problems({ BASE_URL: 'https://auth.example.com', AUTH_COOKIE_SAME_SITE: 'none', AUTH_COOKIE_SECURE: 'false' })).toEqual([
      expect.stringMatching(/^AUTH_COOKIE_SAME_SITE: none needs secure cookies/),
    ]);
  });

  it('takes a domain that covers BASE_URL\'s host, without its leading dot, and refuses one that does not', () => {
    const at = (domain: string): unknown => loadConfig({ ...base, BASE_URL: 'https://auth.example.com', AUTH_COOKIE_DOMAIN: domain }).cookie.domain;
    expect(at('example.com')).toBe('example.com');
    expect(at('.Example.COM')).toBe('example.com');
    expect(at('auth.example.com')).toBe('auth.example.com');
    for (const domain of ['other.com', 'ample.com', 'api.example.com']) {
      expect(problems({ BASE_URL: 'https://auth.example.com', AUTH_COOKIE_DOMAIN: domain }), domain).toEqual([
        "AUTH_COOKIE_DOMAIN: must be BASE_URL's host or a parent of it (browsers drop cookies for any other domain)",
      ]);
    }
    for (const domain of ['https://example.com', 'example.com/', '*.example.com', 'exa mple.com', '-example.com']) {
      expect(problems({ BASE_URL: 'https://auth.example.com', AUTH_COOKIE_DOMAIN: domain }), domain).toEqual([
        'AUTH_COOKIE_DOMAIN: must be a host name such as example.com',
      ]);
    }
  });
});
