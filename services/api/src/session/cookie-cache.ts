import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError, sessionAnswerSchema, type SessionAnswer } from '@portcullis/contracts';
import type { SessionPorts } from './ports.ts';
import { presentedToken } from '../http/session-cookies.ts';

/**
 * Browsers keep at most about 4096 bytes per cookie (Safari's floor is the lowest); the spec refuses the
 * cache above 4093 characters (sections 5 and 9) rather than write a cookie a browser would drop.
 */
export const COOKIE_CACHE_MAX_LENGTH = 4093;
const VERSION = '1';

const envelopeSchema = z.object({ session: z.record(z.string(), z.unknown()), expiresAt: z.number(), signature: z.string() });
const cachedSchema = z.object({
  session: sessionAnswerSchema.shape.session,
  user: sessionAnswerSchema.shape.user,
  updatedAt: z.number(),
  version: z.string().optional(),
});

function sign(secret: string, signed: string): string {
  return createHmac('sha256', secret).update(signed, 'utf8').digest('base64url');
}

/**
 * better-auth's "compact" cookie cache, so its own helpers (getCookieCache in a Next.js middleware, say)
 * can read ours: base64url(JSON {session: {session, user, updatedAt, version}, expiresAt, signature}), where
 * the signature is base64url HMAC-SHA256 over JSON {...session data, expiresAt}. Signed, not encrypted: it
 * holds nothing the cookie's owner does not already have (its own session token and user). Signed with the
 * ring's newest secret.
 */
export function encodeCookieCache(answer: SessionAnswer, secrets: readonly string[], now: Date, maxAgeSeconds: number): string {
  const data = { session: answer.session, user: answer.user, updatedAt: now.getTime(), version: VERSION };
  const expiresAt = now.getTime() + maxAgeSeconds * 1000;
  const value = Buffer.from(JSON.stringify({ session: data, expiresAt, signature: sign(secrets[0]!, JSON.stringify({ ...data, expiresAt })) }), 'utf8').toString(
    'base64url',
  );
  if (value.length > COOKIE_CACHE_MAX_LENGTH) throw new DomainError('SESSION_DATA_TOO_LARGE', { details: `${value.length} characters` });
  return value;
}

/**
 * The answer a session_data cookie holds, if its signature is the newest secret's, it has not expired, the
 * session in it has not expired, and it belongs to `token` (the session cookie sent beside it); else null.
 * One signed with an older secret of the ring is not forged, but is answered from the store (which writes
 * the cache again, signed with the newest), as is a session cookie signed with an older one.
 */
export function decodeCookieCache(value: string, secrets: readonly string[], token: string, now: Date): SessionAnswer | null {
  if (value.length > COOKIE_CACHE_MAX_LENGTH) return null;
  let envelope: z.infer<typeof envelopeSchema>;
  try {
    const result = envelopeSchema.safeParse(JSON.parse(Buffer.from(value, 'base64url').toString('utf8')));
    if (!result.success) return null;
    envelope = result.data;
  } catch {
    return null;
  }
  // The signature covers the data as it was written (key order included), so it is checked before any
  // parsing reshapes it.
  const expected = Buffer.from(sign(secrets[0]!, JSON.stringify({ ...envelope.session, expiresAt: envelope.expiresAt })));
  const given = Buffer.from(envelope.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const cached = cachedSchema.safeParse(envelope.session);
  if (!cached.success) return null;
  const { session, user, version } = cached.data;
  if ((version ?? VERSION) !== VERSION || session.token !== token) return null;
  if (envelope.expiresAt <= now.getTime() || !(Date.parse(session.expiresAt) > now.getTime())) return null;
  return { session, user };
}

/** get-session's fast path: the answer from a valid cookie cache, with no store read; null to go to the store. */
export function answerFromCookieCache(ctx: SessionPorts, request: FastifyRequest, reply: FastifyReply): SessionAnswer | null {
  const name = ctx.cookies.names.sessionData;
  const value = request.cookies[name];
  if (value === undefined) return null;
  const presented = presentedToken(request, ctx.cookies);
  const answer =
    presented?.via === 'cookie' && !presented.signedByOlderSecret && ctx.config.cookieCache.enabled
      ? decodeCookieCache(value, ctx.cookies.secrets, presented.token, ctx.clock())
      : null;
  // Forged, stale, someone else's, signed before a rotation, or the cache is off: the cookie goes (the
  // store's answer writes a fresh one where the cache is on).
  if (!answer) reply.setCookie(name, '', { ...ctx.cookies.attributes, maxAge: 0 });
  return answer;
}

/**
 * Writes the cache after get-session read the store. Data too large for a cookie is refused with
 * SESSION_DATA_TOO_LARGE, which costs the cache, not the answer: get-session still answers from the store.
 */
export function storeCookieCache(
  ctx: SessionPorts,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: SessionAnswer,
  options: { dontRemember: boolean },
): void {
  const name = ctx.cookies.names.sessionData;
  const { maxAgeSeconds } = ctx.config.cookieCache;
  try {
    const value = encodeCookieCache(answer, ctx.cookies.secrets, ctx.clock(), maxAgeSeconds);
    reply.setCookie(name, value, { ...ctx.cookies.attributes, ...(options.dontRemember ? {} : { maxAge: maxAgeSeconds }) });
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'SESSION_DATA_TOO_LARGE') throw error;
    request.log.warn({ code: error.code, details: error.details }, error.message);
    if (request.cookies[name] !== undefined) reply.setCookie(name, '', { ...ctx.cookies.attributes, maxAge: 0 });
  }
}

/**
 * The user just changed (update-user, email verified or changed): a session_data cookie the request carries
 * holds the old user, so it is expired and the next get-session reads the store and writes a fresh one.
 */
export function expireCookieCache(ctx: SessionPorts, request: FastifyRequest, reply: FastifyReply): void {
  const name = ctx.cookies.names.sessionData;
  if (request.cookies[name] !== undefined) reply.setCookie(name, '', { ...ctx.cookies.attributes, maxAge: 0 });
}
