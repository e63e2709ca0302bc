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
});
