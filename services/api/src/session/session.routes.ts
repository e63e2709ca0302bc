import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, getSessionQuerySchema, type SessionAnswer, sessionEndpoints as endpoints } from '@portcullis/contracts';
import { hashToken } from '@portcullis/platform';
import type { SessionPorts } from './ports.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { clearSessionCookies, setSessionCookie } from '../http/session-cookies.ts';
import { route, type DeclaredRequest } from '../http/declared-route.ts';
import { parseQuery } from '../http/validation.ts';
import { answerFromCookieCache, storeCookieCache } from './cookie-cache.ts';
import {
  requireFreshSession,
  requireSession,
  resolveSession,
  sessionAnswer,
  sessionAnswerJson,
  type CurrentSession,
} from './current-session.ts';
import { revokeSession } from './revoke-session.command.ts';
import { runSessionCommand } from './session-change.command.ts';
import { revokeSessions } from './revoke-sessions.command.ts';
import { listUserSessions } from './session-queries.ts';

export function sessionRoutes(ctx: SessionPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    const answer = (request: FastifyRequest, reply: FastifyReply, current: CurrentSession | null): SessionAnswer | string | null => {
      if (!current) return null;
      // A cookie signed with an older secret of the ring is signed again with the newest: a session in use
      // then outlives that secret's removal once a rotation is done (docs/operations.md#rotating-secrets).
      if (current.presented.signedByOlderSecret) {
        setSessionCookie(reply, ctx.cookies, current.token, { dontRemember: current.presented.dontRemember || !current.session.rememberMe });
      }
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
    const getSession = (request: DeclaredRequest<typeof endpoints.getSession>, reply: FastifyReply) => {
      // A POST may carry the flags in its body as well (better-auth reads both).
      const query = request.method === 'GET' || request.body === undefined ? request.query : parseQuery(getSessionQuerySchema, { ...request.query, ...(request.body as object) });
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      // The signed session_data cookie cache (when enabled): a valid one answers without reading the store.
      if (query.disableCookieCache !== true) {
        const cached = answerFromCookieCache(ctx, request, reply);
        if (cached) return cached;
      }
      const current = resolveSession(ctx, request, reply, { refresh: query.disableRefresh !== true });
      return current instanceof Promise ? current.then((resolved) => answer(request, reply, resolved)) : answer(request, reply, current);
    };
    route(app, endpoints.getSession, getSession);

    route(app, endpoints.signOut, async (request, reply) => {
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      if (current) {
        await runSessionCommand(ctx, requestMetadataOf(request), current.session.id, { type: 'revoke', byUserId: current.user.id, reason: 'signed_out' }, {
          actorId: current.user.id,
          settle: 'revocation',
        });
      }
      clearSessionCookies(reply, ctx.cookies);
      return { success: true };
    });

    route(app, endpoints.listSessions, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      requireFreshSession(ctx, current);
      const listed = await listUserSessions(ctx, current.user.id, ctx.clock());
      // Only the caller's own token is known to us (the rest are stored as hashes): other sessions carry
      // their hash in `token`, which revoke-session accepts in place of the token.
      // better-auth's admin plugin hides sessions an admin opened by impersonation from the user's own list.
      return listed.filter(({ session }) => !session.impersonatedBy).map(({ session, tokenHash }) => {
        const { rememberMe: _internal, ...rest } = session;
        return { ...rest, token: tokenHash === current.tokenHash ? current.token : tokenHash };
      });
    });

    route(app, endpoints.revokeSession, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const { token } = request.body;
      const tokenHash = /^[0-9a-f]{64}$/.test(token) ? token : hashToken(token);
      await revokeSession(ctx, requestMetadataOf(request), { byUserId: current.user.id, tokenHash });
      if (tokenHash === current.tokenHash) clearSessionCookies(reply, ctx.cookies);
      return { status: true };
    });

    route(app, endpoints.revokeSessions, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const userId = current.user.id;
      await revokeSessions(ctx, requestMetadataOf(request), { userId, except: null });
      clearSessionCookies(reply, ctx.cookies);
      return { status: true };
    });

    route(app, endpoints.revokeOtherSessions, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const userId = current.user.id;
      await revokeSessions(ctx, requestMetadataOf(request), { userId, except: current.session.id });
      return { status: true };
    });

    route(app, endpoints.updateSession, async (request, reply) => {
      await requireSession(ctx, request, reply);
      // No additional session fields are defined yet, so like better-auth without them there is nothing to set.
      throw new DomainError('NO_FIELDS_TO_UPDATE');
    });
  };
}
