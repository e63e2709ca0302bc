import type { FastifyRequest } from 'fastify';
import { generateId, generateSessionToken, hashToken } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { clientInfo } from '../http/request-context.ts';
import type { NewSession } from './registration.decider.ts';

/** better-auth gives a rememberMe-false session one day, whatever the configured lifetime. */
const DONT_REMEMBER_LIFETIME_SECONDS = 24 * 3600;

export function newSession(ctx: ApiContext, request: FastifyRequest, now: Date, rememberMe: boolean): { token: string; session: NewSession } {
  const token = generateSessionToken();
  const client = clientInfo(request);
  const lifetime = rememberMe ? ctx.config.session.expiresInSeconds : DONT_REMEMBER_LIFETIME_SECONDS;
  return {
    token,
    session: {
      sessionId: generateId(),
      tokenHash: hashToken(token),
      expiresAt: new Date(now.getTime() + lifetime * 1000),
      ipAddress: client.ipAddress,
      userAgent: client.userAgent,
      rememberMe,
    },
  };
}
