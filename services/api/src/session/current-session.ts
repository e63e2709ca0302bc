import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type CachedSession, type Session, type SessionAnswer } from '@portcullis/contracts';
import { hashToken } from '@portcullis/platform';
import type { SessionPorts } from './ports.ts';
import { markImpersonated, requestMetadataOf } from '../http/request-context.ts';
import { clearSessionCookies, presentedToken, setSessionCookie, type PresentedToken } from '../http/session-cookies.ts';
import { refreshDue } from './session.decider.ts';
import { runSessionCommand } from './session-change.command.ts';
import { findSessionByTokenHash, heldSessionByTokenHash } from './session-queries.ts';

export interface CurrentSession {
  readonly token: string;
  readonly tokenHash: string;
  readonly presented: PresentedToken;
  readonly session: CachedSession['session'];
  readonly user: CachedSession['user'];
}

/** The session as answered: without what the cache keeps for itself (rememberMe), before the caller's token. */
function answeredSession(session: CurrentSession['session']): Omit<Session, 'token'> {
  const { rememberMe: _internal, ...answered } = session;
  return answered;
}

export function sessionAnswer(current: CurrentSession): SessionAnswer {
  const answer: Session = { ...answeredSession(current.session), token: current.token };
  return { session: answer, user: current.user };
}

/**
 * What every request with a cached session needs from it and would otherwise recompute: its expiry in epoch
 * ms, and its answer serialised. Kept per cached value: the in-process session cache hands the same object
 * back until Redis reports it changed. `Date.parse` and `JSON.stringify` are runtime calls, and building and
 * serialising the answer was the largest part of a cached get-session after the socket write.
 */
interface SessionFacts {
  readonly expiresAtMs: number;
  /** The answer as JSON, and the token it was built for (see `sessionAnswerJson`); built on the first answer. */
  answer?: { readonly token: string; readonly json: string };
}

const factsBySession = new WeakMap<CurrentSession['session'], SessionFacts>();

function factsOf(session: CurrentSession['session']): SessionFacts {
  let facts = factsBySession.get(session);
  if (!facts) {
    facts = { expiresAtMs: Date.parse(session.expiresAt) };
    factsBySession.set(session, facts);
  }
  return facts;
}

/** `JSON.stringify(sessionAnswer(current))`, serialised once per cached session. */
export function sessionAnswerJson(current: CurrentSession): string {
  const facts = factsOf(current.session);
  // Only one token hashes to a session; another one here gets an answer of its own rather than a stale one.
  if (facts.answer?.token !== current.token) facts.answer = { token: current.token, json: JSON.stringify(sessionAnswer(current)) };
  return facts.answer.json;
}

type ResolveOptions = { readonly refresh: boolean };

/** Whether the refresh rule asks for one: deciding a refresh means reading the session's stream, so the rule goes first. */
function refreshWanted(
  ctx: SessionPorts,
  presented: PresentedToken,
  session: CurrentSession['session'],
  expiresAtMs: number,
  now: Date,
  options: ResolveOptions,
): boolean {
  const dontRemember = presented.dontRemember || !session.rememberMe;
  return options.refresh && !dontRemember && refreshDue(expiresAtMs, now, ctx.config.session);
}

/**
 * The session the request presents, or null. An expired session is ended (better-auth deletes it) and its
 * cookies cleared; a live one past its update age gets a new lifetime unless the caller asked not to, or
 * it was created with rememberMe false.
 *
 * Answered at once, without a promise, when this process holds the session, live and with no refresh due:
 * most get-session calls. Everything else waits on the store.
 */
export function resolveSession(
  ctx: SessionPorts,
  request: FastifyRequest,
  reply: FastifyReply,
  options: ResolveOptions,
): CurrentSession | null | Promise<CurrentSession | null> {
  const presented = presentedToken(request, ctx.cookies);
  if (!presented) return null;
  const tokenHash = hashToken(presented.token);
  const held = heldSessionByTokenHash(ctx, tokenHash);
  if (held) {
    const now = ctx.clock();
    const { expiresAtMs } = factsOf(held.session);
    if (expiresAtMs > now.getTime() && !refreshWanted(ctx, presented, held.session, expiresAtMs, now, options)) {
      if (held.session.impersonatedBy) markImpersonated(request, held.session.impersonatedBy);
      return { token: presented.token, tokenHash, presented, session: held.session, user: held.user };
    }
  }
  return settleSession(ctx, request, reply, options, presented, tokenHash, held);
}

/** The rest of resolveSession: the store read (unless the process holds the session), the expiry, the refresh. */
async function settleSession(
  ctx: SessionPorts,
  request: FastifyRequest,
  reply: FastifyReply,
  options: ResolveOptions,
  presented: PresentedToken,
  tokenHash: string,
  held: CachedSession | undefined,
): Promise<CurrentSession | null> {
  const found = held ?? (await findSessionByTokenHash(ctx, tokenHash));
  if (!found) {
    if (presented.via === 'cookie') clearSessionCookies(reply, ctx.cookies);
    return null;
  }
  const now = ctx.clock();
  // The expiry check and the refresh rule both need it, on every request.
  const { expiresAtMs } = factsOf(found.session);
  const notASession = (): null => {
    if (presented.via === 'cookie') clearSessionCookies(reply, ctx.cookies);
    return null;
  };
  if (expiresAtMs <= now.getTime()) {
    await runSessionCommand(ctx, requestMetadataOf(request), found.session.id, { type: 'expire', now }, { actorId: null });
    return notASession();
  }
  let session = found.session;
  if (session.impersonatedBy) markImpersonated(request, session.impersonatedBy);
  if (refreshWanted(ctx, presented, session, expiresAtMs, now, options)) {
    let events: Awaited<ReturnType<typeof runSessionCommand>>;
    try {
      events = await runSessionCommand(
        ctx,
        requestMetadataOf(request),
        session.id,
        {
          type: 'refresh',
          now,
          expiresInSeconds: ctx.config.session.expiresInSeconds,
          updateAgeSeconds: ctx.config.session.updateAgeSeconds,
        },
        { actorId: session.userId },
      );
    } catch (error) {
      // The session's own stream says it has ended (or expired) meanwhile: that, not the read, is the answer.
      if (error instanceof DomainError && (error.code === 'SESSION_NOT_FOUND' || error.code === 'SESSION_EXPIRED')) return notASession();
      throw error;
    }
    const refreshed = events.find((e) => e.type === 'session.refreshed.v1');
    if (refreshed) {
      session = { ...session, expiresAt: refreshed.data.expiresAt, updatedAt: now.toISOString() };
      setSessionCookie(reply, ctx.cookies, presented.token, { dontRemember: false });
    }
  }
  return { token: presented.token, tokenHash, presented, session, user: found.user };
}

export async function requireSession(ctx: SessionPorts, request: FastifyRequest, reply: FastifyReply): Promise<CurrentSession> {
  const current = await resolveSession(ctx, request, reply, { refresh: false });
  if (!current) throw new DomainError('UNAUTHORIZED');
  return current;
}

/**
 * better-auth's freshness rule for sensitive requests: the session must have been created within freshAge
 * (a refresh does not make it fresh again); a freshAge of 0 turns the check off.
 */
export function sessionIsFresh(ctx: SessionPorts, current: CurrentSession): boolean {
  const freshAgeMs = ctx.config.session.freshAgeSeconds * 1000;
  return freshAgeMs === 0 || ctx.clock().getTime() - Date.parse(current.session.createdAt) < freshAgeMs;
}

/** SESSION_NOT_FRESH unless the session is fresh (`sessionIsFresh`). */
export function requireFreshSession(ctx: SessionPorts, current: CurrentSession): void {
  if (!sessionIsFresh(ctx, current)) throw new DomainError('SESSION_NOT_FRESH');
}
