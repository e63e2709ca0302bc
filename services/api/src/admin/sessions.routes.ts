import type { FastifyInstance } from 'fastify';
import { adminEndpoints as endpoints, DomainError, type Session } from '@portcullis/contracts';
import { hashToken } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import {
  adminSessionCookie,
  clearAdminSessionCookie,
  clearDontRemember,
  setAdminSessionCookie,
  setSessionCookie,
} from '../http/session-cookies.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';
import { requireSession, sessionAnswer } from '../session/current-session.ts';
import { findSessionByTokenHash, listUserSessions } from '../session/session-queries.ts';
import { authorityOf, existingUser, requireAdmin, requireAdminAction } from './admin-guard.ts';
import { impersonateUser, stopImpersonating } from './impersonate-user.command.ts';
import { revokeUserSession, revokeUserSessions } from './revoke-user-sessions.command.ts';

/** A session as answered, without what the cache keeps for itself. */
function answered(session: Omit<Session, 'token'> & { rememberMe?: boolean }, token: string): Session {
  const { rememberMe: _internal, ...rest } = session;
  return { ...rest, token };
}

export function adminSessionRoutes(ctx: AdminPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.listUserSessions, async (request, reply) => {
      await requireAdmin(ctx, request, reply, { session: ['list'] }, 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS');
      const listed = await listUserSessions(ctx, request.body.userId, ctx.clock());
      // Tokens are stored only as hashes: each session carries its hash, which revoke-user-session accepts.
      return { sessions: listed.map(({ session, tokenHash }) => answered(session, tokenHash)) };
    });

    route(app, endpoints.revokeUserSession, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { session: ['revoke'] }, 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS');
      await revokeUserSession(ctx, requestMetadataOf(request), { by: authorityOf(ctx, caller), sessionToken: request.body.sessionToken });
      return { success: true };
    });

    route(app, endpoints.revokeUserSessions, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { session: ['revoke'] }, 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS');
      await revokeUserSessions(ctx, requestMetadataOf(request), { by: authorityOf(ctx, caller), userId: request.body.userId });
      return { success: true };
    });

    route(app, endpoints.impersonateUser, async (request, reply) => {
      // From an impersonation session this is refused too: a chain of impersonations would hide the first admin.
      const caller = await requireAdminAction(ctx, request, reply, { user: ['impersonate'] }, 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS');
      const target = await existingUser(ctx, request.body.userId);
      const opened = await impersonateUser(ctx, requestMetadataOf(request), { by: authorityOf(ctx, caller), userId: target.id });
      // The admin's own session waits in admin_session; the browser now presents the impersonation session.
      expireCookieCache(ctx, request, reply);
      setAdminSessionCookie(request, reply, ctx.cookies, caller.token);
      setSessionCookie(reply, ctx.cookies, opened.token, { dontRemember: true });
      const user = await existingUser(ctx, target.id);
      return {
        session: {
          id: opened.session.sessionId,
          userId: target.id,
          token: opened.token,
          expiresAt: opened.session.expiresAt.toISOString(),
          createdAt: opened.at,
          updatedAt: opened.at,
          ipAddress: opened.session.ipAddress,
          userAgent: opened.session.userAgent,
          activeOrganizationId: null,
          activeTeamId: null,
          impersonatedBy: caller.user.id,
        },
        user,
      };
    });

    route(app, endpoints.stopImpersonating, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      if (!current.session.impersonatedBy) throw new DomainError('YOU_ARE_NOT_IMPERSONATING_ANYONE');
      const kept = adminSessionCookie(request, ctx.cookies);
      if (!kept) throw new DomainError('FAILED_TO_FIND_ADMIN_SESSION');
      const adminTokenHash = hashToken(kept.token);
      const adminSession = await findSessionByTokenHash(ctx, adminTokenHash);
      await stopImpersonating(ctx, requestMetadataOf(request), { impersonation: current.session, adminSession });
      expireCookieCache(ctx, request, reply);
      if (!kept.dontRemember) clearDontRemember(request, reply, ctx.cookies);
      setSessionCookie(reply, ctx.cookies, kept.token, { dontRemember: kept.dontRemember });
      clearAdminSessionCookie(reply, ctx.cookies);
      return sessionAnswer({ token: kept.token, tokenHash: adminTokenHash, presented: { token: kept.token, dontRemember: kept.dontRemember, via: 'cookie', signedByOlderSecret: false }, ...adminSession! });
    });
  };
}
