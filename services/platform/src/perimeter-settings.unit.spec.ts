import { describe, expect, it } from 'vitest';
import { loadConfig } from './config/index.ts';
import { parseRateLimitRules, parseTrustedOrigins, parseTrustedProxies, rulePathMatches } from './perimeter-settings.ts';

const base = { DATABASE_URL: 'postgres://localhost/x', AUTH_SECRET: 'a-perfectly-good-secret-of-more-than-32-characters' };

describe('TRUSTED_ORIGINS', () => {
  it('takes exact origins, wildcard patterns and app schemes; trailing slashes are dropped', () => {
    expect(parseTrustedOrigins(' https://app.example.com/, http://localhost:5173 ,https://*.example.org,*.partner.test,myapp://').values).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
      'https://*.example.org',
      '*.partner.test',
      'myapp://',
    ]);
  });

  it('refuses paths, bare wildcards and non-origins, one problem each', () => {
    const { values, problems } = parseTrustedOrigins('https://app.example.com/login,*,https://*,https://*.x.com/path,app.example.com,ftp//x');
    expect(values).toEqual([]);
    expect(problems).toHaveLength(6);
  });

  it('puts the base URL origin first in the config, and reports bad entries at start', () => {
    const config = loadConfig({ ...base, BASE_URL: 'https://auth.example.com/', TRUSTED_ORIGINS: 'https://app.example.com' });
    expect(config.trustedOrigins).toEqual(['https://auth.example.com', 'https://app.example.com']);
    expect(() => loadConfig({ ...base, TRUSTED_ORIGINS: 'https://app.example.com/login' })).toThrow(/TRUSTED_ORIGINS: .*not an origin/);
  });
});

describe('AUTH_TRUSTED_PROXIES', () => {
  it('takes addresses, CIDR ranges and proxy-addr keywords, and refuses the rest', () => {
    expect(parseTrustedProxies('10.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback')).toEqual({
      values: ['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', 'loopback'],
      problems: [],
    });
    expect(parseTrustedProxies('10.0.0.0/33,proxy.local,1.2.3.4/8/9').problems).toHaveLength(3);
  });
});

describe('rate-limit settings', () => {
  it('parses path=max/window and path=off, prefix rules with *', () => {
    expect(parseRateLimitRules('/sign-in/email=10/60, /get-session=off,/organization/*=50/10')).toEqual({
      values: [
        { path: '/sign-in/email', limit: { max: 10, window: 60 } },
        { path: '/get-session', limit: null },
        { path: '/organization/*', limit: { max: 50, window: 10 } },
      ],
      problems: [],
    });
    expect(parseRateLimitRules('sign-in=1/1,/x=0/10,/y=abc').problems).toHaveLength(3);
    expect(rulePathMatches('/sign-in*', '/sign-in/username')).toBe(true);
    expect(rulePathMatches('/sign-in/email', '/sign-in/email/x')).toBe(false);
  });

  it("has better-auth's defaults: on, 100 per 10 s, 3 per 10 s on sign-in, 3 per 60 s on mail routes", () => {
    const config = loadConfig(base);
    expect(config.rateLimit).toMatchObject({ enabled: true, storage: 'postgres', window: 10, max: 100 });
    const rule = (path: string) => config.rateLimit.rules.find((r) => rulePathMatches(r.path, path))?.limit;
    expect(rule('/sign-in/email')).toEqual({ window: 10, max: 3 });
    expect(rule('/sign-up/email')).toEqual({ window: 10, max: 3 });
    expect(rule('/change-password')).toEqual({ window: 10, max: 3 });
    expect(rule('/change-email')).toEqual({ window: 10, max: 3 });
    expect(rule('/forget-password')).toEqual({ window: 60, max: 3 });
    expect(rule('/request-password-reset')).toEqual({ window: 60, max: 3 });
    expect(rule('/send-verification-email')).toEqual({ window: 60, max: 3 });
    expect(rule('/get-session')).toBeUndefined();
    expect(loadConfig({ ...base, REDIS_URL: 'redis://127.0.0.1:6379' }).rateLimit.storage).toBe('redis');
    expect(() => loadConfig({ ...base, AUTH_RATE_LIMIT_STORAGE: 'redis' })).toThrow(/AUTH_RATE_LIMIT_STORAGE/);
  });

  it('puts configured rules before the defaults', () => {
    const config = loadConfig({ ...base, AUTH_RATE_LIMIT_RULES: '/sign-in/email=20/60' });
    expect(config.rateLimit.rules.find((r) => rulePathMatches(r.path, '/sign-in/email'))?.limit).toEqual({ window: 60, max: 20 });
  });
});

describe('cookie settings', () => {
  it('caps cookie max ages at 400 days (34560000 s) and defaults the cookie cache to off, 60 s', () => {
    expect(loadConfig(base).cookieCache).toEqual({ enabled: false, maxAgeSeconds: 60 });
    expect(loadConfig({ ...base, AUTH_COOKIE_CACHE_MAX_AGE: '34560000', AUTH_SESSION_EXPIRES_IN: '34560000' }).cookieCache.maxAgeSeconds).toBe(
      34_560_000,
    );
    expect(() => loadConfig({ ...base, AUTH_COOKIE_CACHE_MAX_AGE: '34560001' })).toThrow(/AUTH_COOKIE_CACHE_MAX_AGE: cookie max age above 400 days/);
    expect(() => loadConfig({ ...base, AUTH_SESSION_EXPIRES_IN: '34560001' })).toThrow(/AUTH_SESSION_EXPIRES_IN: cookie max age above 400 days/);
  });
});
