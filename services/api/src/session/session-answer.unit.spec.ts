import { describe, expect, it } from 'vitest';
import { sessionAnswer, sessionAnswerJson, type CurrentSession } from './current-session.ts';

function current(token: string, overrides: Partial<CurrentSession['session']> = {}, user: Partial<CurrentSession['user']> = {}): CurrentSession {
  return {
    token,
    tokenHash: 'h'.repeat(64),
    presented: { token, via: 'bearer', dontRemember: false, signedByOlderSecret: false },
    session: {
      id: 'session-1',
      userId: 'user-1',
      expiresAt: '2026-11-30T18:40:27.628Z',
      createdAt: '2026-11-23T18:40:27.628Z',
      updatedAt: '2026-11-23T18:40:27.628Z',
      ipAddress: null,
      userAgent: 'node "quoted" \\ agent',
      rememberMe: true,
      activeOrganizationId: null,
      activeTeamId: null,
      ...overrides,
    },
    user: {
      id: 'user-1',
      email: 'ada@example.com',
      name: 'Ada «Lovelace» ✓',
      image: null,
      emailVerified: true,
      createdAt: '2026-11-23T18:40:27.546Z',
      updatedAt: '2026-11-23T18:40:27.546Z',
      ...user,
    },
  } as CurrentSession;
}

describe('sessionAnswerJson', () => {
  it('is JSON.stringify of the answer, byte for byte, without rememberMe and with the token last in the session', () => {
    for (const c of [
      current('tok-1'),
      current('tok-2', { activeOrganizationId: 'org-1', activeTeamId: 'team-1', ipAddress: '198.51.100.4' }),
      current('tok-3', {}, { username: 'ada', displayUsername: 'Ada' }),
    ]) {
      const json = sessionAnswerJson(c);
      expect(json).toBe(JSON.stringify(sessionAnswer(c)));
      expect(JSON.parse(json).session).not.toHaveProperty('rememberMe');
    }
  });

  it('puts each caller’s own token into an answer built once for the cached session', () => {
    const first = current('token-a');
    const second: CurrentSession = { ...first, token: 'token-b' };
    expect(JSON.parse(sessionAnswerJson(first)).session.token).toBe('token-a');
    expect(JSON.parse(sessionAnswerJson(second)).session.token).toBe('token-b');
  });

  it('follows a changed session: a new cached value is a new object, and is serialised anew', () => {
    const before = current('token-a');
    sessionAnswerJson(before);
    const refreshed: CurrentSession = { ...before, session: { ...before.session, expiresAt: '2026-12-07T18:40:27.628Z' } };
    expect(JSON.parse(sessionAnswerJson(refreshed)).session.expiresAt).toBe('2026-12-07T18:40:27.628Z');
  });
});
