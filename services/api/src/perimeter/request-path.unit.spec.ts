import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { authPath } from './request-path.ts';

const pathOf = (url: string): string | null => authPath({ url } as FastifyRequest, '/api/auth');

describe('authPath', () => {
  it('gives the path under the base path, without query or fragment, and null outside it', () => {
    expect(pathOf('/api/auth/sign-in/email?callbackURL=/x')).toBe('/sign-in/email');
    expect(pathOf('/api/auth/reset-password/abc#top')).toBe('/reset-password/abc');
    expect(pathOf('/api/auth')).toBe('/');
    expect(pathOf('/api/auth/')).toBe('/');
    expect(pathOf('/healthz')).toBeNull();
    expect(pathOf('/api/authx/sign-in/email')).toBeNull();
  });

  it('reads repeated slashes as one and drops a trailing slash, as the rules it is matched against expect', () => {
    expect(pathOf('/api/auth/sign-in/email/')).toBe('/sign-in/email');
    expect(pathOf('/api/auth//sign-in//email')).toBe('/sign-in/email');
    expect(pathOf('/api//auth/sign-up/email//')).toBe('/sign-up/email');
  });
});
