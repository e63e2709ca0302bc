import { describe, expect, it } from 'vitest';
import { loggableUrl } from './log-serializers.ts';

describe('URLs in logs', () => {
  it('logs a route with path parameters by its pattern, since the parameter may be a mailed token', () => {
    expect(loggableUrl({ url: '/api/auth/reset-password/s3cr3tT0ken?callbackURL=%2Freset', routeOptions: { url: '/api/auth/reset-password/:token' } })).toBe(
      '/api/auth/reset-password/:token?callbackURL=%2Freset',
    );
  });

  it('censors the values of credential-like query parameters and keeps the rest', () => {
    expect(loggableUrl({ url: '/api/auth/verify-email?token=eyJhbGci.x.y&callbackURL=%2Fdone', routeOptions: { url: '/api/auth/verify-email' } })).toBe(
      '/api/auth/verify-email?token=[redacted]&callbackURL=%2Fdone',
    );
    expect(loggableUrl({ url: '/api/auth/callback/github?code=abc&state=def' })).toBe('/api/auth/callback/github?code=[redacted]&state=[redacted]');
    expect(loggableUrl({ url: '/api/auth/get-session' })).toBe('/api/auth/get-session');
  });

  it('censors query parameters that carry personal data, which a log would keep past the user\'s erasure', () => {
    expect(loggableUrl({ url: '/api/auth/admin/list-users?searchValue=alice%40example.com&searchField=email&limit=10' })).toBe(
      '/api/auth/admin/list-users?searchValue=[redacted]&searchField=[redacted]&limit=10',
    );
    expect(loggableUrl({ url: '/api/auth/organization/list-invitations?email=bob@example.com' })).toBe('/api/auth/organization/list-invitations?email=[redacted]');
    expect(loggableUrl({ url: '/api/auth/callback/apple?code=c&state=s&user=%7B%22email%22%3A%22a%40b.c%22%7D' })).toBe(
      '/api/auth/callback/apple?code=[redacted]&state=[redacted]&user=[redacted]',
    );
    expect(loggableUrl({ url: '/api/auth/audit/events?userId=u1' })).toBe('/api/auth/audit/events?userId=u1');
  });
});
