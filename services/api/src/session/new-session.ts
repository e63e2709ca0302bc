import { generateSessionToken, hashToken, sessionIdForTokenHash } from '@portcullis/platform';
import type { SessionPorts } from './ports.ts';
import type { RequestMetadata } from '@portcullis/platform';
import type { NewSession } from './session-lifecycle.ts';

/** better-auth gives a rememberMe-false session one day, whatever the configured lifetime. */
const DONT_REMEMBER_LIFETIME_SECONDS = 24 * 3600;

export function newSession(ctx: Pick<SessionPorts, 'config'>, request: RequestMetadata, now: Date, rememberMe: boolean): { token: string; session: NewSession } {
  const token = generateSessionToken();
  const tokenHash = hashToken(token);
  const lifetime = rememberMe ? ctx.config.session.expiresInSeconds : DONT_REMEMBER_LIFETIME_SECONDS;
  return {
    token,
    session: {
      sessionId: sessionIdForTokenHash(tokenHash),
      tokenHash,
      expiresAt: new Date(now.getTime() + lifetime * 1000),
      ipAddress: request.ipAddress,
      userAgent: request.userAgent?.slice(0, 512) ?? null,
      rememberMe,
    },
  };
}
