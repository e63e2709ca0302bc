import { describe, expect, it } from 'vitest';
import { DomainError, unbannedUser, type SessionAnswer } from '@portcullis/contracts';
import { COOKIE_CACHE_MAX_LENGTH, decodeCookieCache, encodeCookieCache } from './cookie-cache.ts';

const secret = ['a-perfectly-good-secret-of-more-than-32-characters'] as const;
const now = new Date('2026-03-01T10:00:00.000Z');
const answer = (overrides: { name?: string; image?: string | null } = {}): SessionAnswer => ({
  session: {
    id: 'session-id',
    userId: 'user-id',
    token: 'tok3n',
    expiresAt: '2026-03-08T10:00:00.000Z',
    createdAt: '2026-03-01T10:00:00.000Z',
    updatedAt: '2026-03-01T10:00:00.000Z',
    ipAddress: '127.0.0.1',
    userAgent: 'UA',
    activeOrganizationId: null,
    activeTeamId: null,
    impersonatedBy: null,
  },
  user: {
    id: 'user-id',
    email: 'ada@example.com',
    name: overrides.name ?? 'Ada',
    image: overrides.image ?? null,
    emailVerified: false,
    createdAt: '2026-03-01T10:00:00.000Z',
    updatedAt: '2026-03-01T10:00:00.000Z',
    ...unbannedUser,
  },
});

describe('session_data cookie cache encoding', () => {
  it('round-trips while valid, for the session token it was written for', () => {
    const value = encodeCookieCache(answer(), secret, now, 60);
    expect(decodeCookieCache(value, secret, 'tok3n', new Date(now.getTime() + 59_999))).toEqual(answer());
    expect(decodeCookieCache(value, secret, 'other-token', now)).toBeNull();
  });

  it('is worthless once its max age has passed, under another secret, or when the session in it has expired', () => {
    const value = encodeCookieCache(answer(), secret, now, 60);
    expect(decodeCookieCache(value, secret, 'tok3n', new Date(now.getTime() + 60_000))).toBeNull();
    expect(decodeCookieCache(value, [`${secret[0]}!`], 'tok3n', now)).toBeNull();
    const late = encodeCookieCache(answer(), secret, new Date('2026-03-07T23:59:30.000Z'), 3600);
    expect(decodeCookieCache(late, secret, 'tok3n', new Date('2026-03-08T00:00:00.000Z'))).not.toBeNull();
    expect(decodeCookieCache(late, secret, 'tok3n', new Date('2026-03-08T10:00:00.000Z'))).toBeNull();
  });

  it('refuses garbage without throwing', () => {
    for (const value of ['', 'not base64 at all!', Buffer.from('{"session":1}').toString('base64url'), 'x'.repeat(5000)]) {
      expect(decodeCookieCache(value, secret, 'tok3n', now)).toBeNull();
    }
  });

  it('refuses data above 4093 characters with SESSION_DATA_TOO_LARGE', () => {
    const big = answer({ image: `https://example.com/${'i'.repeat(3000)}` });
    let thrown: unknown;
    try {
      encodeCookieCache(big, secret, now, 60);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect((thrown as DomainError).code).toBe('SESSION_DATA_TOO_LARGE');
    expect((thrown as DomainError).message).toBe('Session data is too large to store in the cookie');
    // Just under the limit is fine.
    const fits = encodeCookieCache(answer({ image: `https://example.com/${'i'.repeat(2300)}` }), secret, now, 60);
    expect(fits.length).toBeLessThanOrEqual(COOKIE_CACHE_MAX_LENGTH);
  });
});
