import { describe, expect, it } from 'vitest';
import { isSafeRelativePath, isTrustedOrigin, isTrustedRedirect, matchesOriginPattern } from './trusted-origins.ts';

const trusted = ['http://localhost:3000', 'https://app.example.com', 'https://*.example.org', '*.partner.test', 'myapp://'];

describe('trusted origins (better-auth matchesOriginPattern)', () => {
  it.each([
    ['http://localhost:3000', true],
    ['http://localhost:3000/some/path?q=1', true],
    ['https://app.example.com', true],
    ['https://APP.example.com', true],
    ['https://a.example.org', true],
    ['https://a.b.example.org', true],
    ['http://a.partner.test', true],
    // A bare host pattern names no port, so it matches the host without one (as better-auth's does).
    ['https://a.partner.test:8443', false],
    ['myapp://callback', true],
    ['http://localhost:3001', false],
    ['https://localhost:3000', false],
    ['http://app.example.com', false],
    ['https://app.example.com.evil.io', false],
    ['https://example.org', false],
    ['http://a.example.org', false],
    ['https://example.org.evil.io', false],
    ['https://evil.io/.example.org', false],
    ['https://evil.io?.example.org', false],
    ['https://app.example.com@evil.io', false],
    ['otherapp://callback', false],
    ['null', false],
    ['', false],
  ])('%s → %s', (origin, expected) => {
    expect(isTrustedOrigin(origin, trusted)).toBe(expected);
  });

  it('admits only IPv4 addresses under a pattern made of digits and wildcards', () => {
    expect(matchesOriginPattern('http://192.168.1.20', 'http://192.168.*.*')).toBe(true);
    expect(matchesOriginPattern('http://192.168.attacker.com', 'http://192.168.*')).toBe(false);
  });

  it('matches app schemes by scheme, authority and path prefix, resolving dot segments first', () => {
    expect(matchesOriginPattern('exp://host/cb/x', 'exp://host/cb')).toBe(true);
    expect(matchesOriginPattern('exp://host/cb/../evil', 'exp://host/cb')).toBe(false);
    expect(matchesOriginPattern('exp://other/cb', 'exp://host/cb')).toBe(false);
  });
});

describe('redirect and callback URLs', () => {
  it.each([
    ['/dashboard', true],
    ['/dashboard?next=%2Fhome#top', true],
    ['/', true],
    ['https://app.example.com/after?x=1', true],
    ['https://a.example.org/welcome', true],
    ['//evil.io/phish', false],
    ['/\\evil.io', false],
    ['/%2F%2Fevil.io', false],
    ['/%5Cevil.io', false],
    ['/a\tb', false],
    ['/\u0000x', false],
    ['dashboard', false],
    ['javascript:alert(1)', false],
    ['data:text/html,x', false],
    ['https://evil.io/', false],
    ['http://app.example.com/', false],
    // Dot segments that resolve to a network-path reference (issue 20), plain or encoded.
    ['/..//evil.io', false],
    ['/%2e%2e//evil.io', false],
    ['/x/../..//evil.io', false],
    ['/a/../b', true],
    // The URL parser drops tabs and newlines: what is checked must be what is followed.
    ['https://app.example.com/\tafter', false],
    ['https://app.example.com\n', false],
  ])('%s → %s', (url, expected) => {
    expect(isTrustedRedirect(url, trusted)).toBe(expected);
  });

  it('never takes a relative path as an origin', () => {
    expect(isTrustedOrigin('/dashboard', trusted)).toBe(false);
    expect(isSafeRelativePath('/dashboard')).toBe(true);
  });
});
