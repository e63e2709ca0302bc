import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  DomainError,
  getSessionQuerySchema,
  type SessionAnswer,
  revokeSessionBodySchema,
  streams,
  updateSessionBodySchema,
  type EventData,
} from '@portcullis/contracts';
import { hashToken, type StreamWrite } from '@portcullis/platform';
import { commit, withRetryOnConflict } from '../commit.ts';
import type { ApiContext } from '../context.ts';
import { eventMetadata } from '../http/request-context.ts';
import { clearSessionCookies } from '../http/session-cookies.ts';
import { parseBody, parseQuery } from '../http/validation.ts';
import { loadStream, streamWrite } from '../write-model.ts';
import { answerFromCookieCache, storeCookieCache } from './cookie-cache.ts';
import {
  requireSession,
  resolveSession,
  runSessionCommand,
  sessionAnswer,
  sessionAnswerJson,
  type CurrentSession,
} from './current-session.ts';
import { decideSession, evolveSession, initialSessionState } from './session.decider.ts';
import { listUserSessions, sessionIdByTokenHash, userSessionIds } from './session-queries.ts';

type EndReason = EventData<'session.revoked.v1'>['reason'];

/** Ends several sessions of one user in one atomic append. */
async function endSessions(
  ctx: ApiContext,
  request: FastifyRequest,
  sessionIds: readonly string[],
  byUserId: string,
  reason: EndReason,
): Promise<void> {
  await withRetryOnConflict(async () => {
    const metadata = eventMetadata(request, ctx.clock(), byUserId);
    const writes: StreamWrite[] = [];
    for (const sessionId of sessionIds) {
      const streamId = streams.session(sessionId);
      const { state, version } = await loadStream(ctx.store, streamId, evolveSession, initialSessionState);
      writes.push(streamWrite(streamId, version, decideSession({ type: 'revoke', byUserId, reason }, state), metadata));
    }
    await commit(ctx, writes);
  });
}

/**
 * better-auth's freshness rule for sensitive reads: the session must have been created within freshAge
 * (a refresh does not make it fresh again); a freshAge of 0 turns the check off.
 */
function requireFresh(ctx: ApiContext, current: CurrentSession): void {
  const freshAgeMs = ctx.config.session.freshAgeSeconds * 1000;
  if (freshAgeMs > 0 && ctx.clock().getTime() - Date.parse(current.session.createdAt) >= freshAgeMs) {
    throw new DomainError('SESSION_NOT_FRESH');
  }
}

export function sessionRoutes(ctx: ApiContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    const answer = (request: FastifyRequest, reply: FastifyReply, current: CurrentSession | null): SessionAnswer | string | null => {
      if (!current) return null;
      if (ctx.config.cookieCache.enabled && current.presented.via === 'cookie') {
        const answered = sessionAnswer(current);
        storeCookieCache(ctx, request, reply, answered, {
          dontRemember: current.presented.dontRemember || !current.session.rememberMe,
        });
        return answered;
      }
      // Already JSON: fastify sends a string with a JSON content type as it is.
      reply.header('content-type', 'application/json; charset=utf-8');
      return sessionAnswerJson(current);
    };
    // Not async: a session this process holds is answered without a promise (see resolveSession).
    const getSession = (request: FastifyRequest, reply: FastifyReply) => {
      const source = request.method === 'GET' ? request.query : { ...(request.query as object), ...(request.body as object) };
      const query = parseQuery(getSessionQuerySchema, source);
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      // The signed session_data cookie cache (when enabled): a valid one answers without reading the store.
      if (query.disableCookieCache !== true) {
        const cached = answerFromCookieCache(ctx, request, reply);
        if (cached) return cached;
      }
      const current = resolveSession(ctx, request, reply, { refresh: query.disableRefresh !== true });
      return current instanceof Promise ? current.then((resolved) => answer(request, reply, resolved)) : answer(request, reply, current);
    };
    app.get('/get-session', getSession);
    app.post('/get-session', getSession);

    app.post('/sign-out', async (request, reply) => {
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      if (current) {
        await runSessionCommand(
          ctx,
          request,
          current.session.id,
          { type: 'revoke', byUserId: current.user.id, reason: 'signed_out' },
          current.user.id,
        );
      }
      clearSessionCookies(reply, ctx.cookies);
      return { success: true };
    });

    app.get('/list-sessions', async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      requireFresh(ctx, current);
      const listed = await listUserSessions(ctx, current.user.id, ctx.clock());
      // Only the caller's own token is known to us (the rest are stored as hashes): other sessions carry
      // their hash in `token`, which revoke-session accepts in place of the token.
      return listed.map(({ session, tokenHash }) => {
        const { rememberMe: _internal, ...rest } = session;
        return { ...rest, token: tokenHash === current.tokenHash ? current.token : tokenHash };
      });
    });

    app.post('/revoke-session', async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const { token } = parseBody(revokeSessionBodySchema, request.body);
      const tokenHash = /^[0-9a-f]{64}$/.test(token) ? token : hashToken(token);
      const sessionId = await sessionIdByTokenHash(ctx, tokenHash);
      // Unknown or someone else's: status true and nothing happens, as better-auth answers.
      if (sessionId) await endSessions(ctx, request, [sessionId], current.user.id, 'revoked');
      if (tokenHash === current.tokenHash) clearSessionCookies(reply, ctx.cookies);
      return { status: true };
    });

    app.post('/revoke-sessions', async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      await endSessions(ctx, request, await userSessionIds(ctx, current.user.id), current.user.id, 'revoked_all');
      clearSessionCookies(reply, ctx.cookies);
      return { status: true };
    });

    app.post('/revoke-other-sessions', async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const others = (await userSessionIds(ctx, current.user.id)).filter((id) => id !== current.session.id);
      await endSessions(ctx, request, others, current.user.id, 'revoked_others');
      return { status: true };
    });

    app.post('/update-session', async (request, reply) => {
      await requireSession(ctx, request, reply);
      const body = parseBody(updateSessionBodySchema, request.body);
      // No additional session fields are defined yet, so like better-auth without them there is nothing to set.
      void body;
      throw new DomainError('NO_FIELDS_TO_UPDATE');
    });
  };
}
