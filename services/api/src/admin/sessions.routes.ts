import type { FastifyInstance } from 'fastify';
import { adminEndpoints as endpoints, DomainError, streams, type Session } from '@portcullis/contracts';
import { hashToken, sessionIdForTokenHash } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import {
  adminSessionCookie,
  clearAdminSessionCookie,
  clearDontRemember,
  setAdminSessionCookie,
  setSessionCookie,
} from '../http/session-cookies.ts';
import { accountIn } from '../identity/account-model.ts';
import { decideSignInBan } from '../identity/account.decider.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';
import { requireSession, runSessionCommand, sessionAnswer } from '../session/current-session.ts';
import { newSession } from '../session/new-session.ts';
import { decideOnSession, endAllSessions, openImpersonationSession } from '../session/session-lifecycle.ts';
import { findSessionByTokenHash, listUserSessions, sessionIdByTokenHash } from '../session/session-queries.ts';
import { sessionModel } from '../session/session.decider.ts';
import { authorityOf, decideOnTarget, existingUser, requireAdmin, requireAdminAction } from './admin-guard.ts';

/** A session as answered, without what the cache keeps for itself. */
function answered(session: Omit<Session, 'token'> & { rememberMe?: boolean }, token: string): Session {
  const { rememberMe: _internal, ...rest } = session;
  return { ...rest, token };
}

export function adminSessionRoutes(ctx: ApiContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.listUserSessions, async (request, reply) => {
      await requireAdmin(ctx, request, reply, { session: ['list'] }, 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS');
      const listed = await listUserSessions(ctx, request.body.userId, ctx.clock());
      // Tokens are stored only as hashes: each session carries its hash, which revoke-user-session accepts.
      return { sessions: listed.map(({ session, tokenHash }) => answered(session, tokenHash)) };
    });

    route(app, endpoints.revokeUserSession, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { session: ['revoke'] }, 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS');
      const { sessionToken } = request.body;
      const tokenHash = /^[0-9a-f]{64}$/.test(sessionToken) ? sessionToken : hashToken(sessionToken);
      const derived = sessionIdForTokenHash(tokenHash);
      await ctx.commands.handle(
        { name: 'admin.revoke-user-session', request: requestMetadataOf(request), actorId: caller.user.id, actorKind: 'admin', serialize: [streams.session(derived)], settle: 'revocation' },
        async (unit) => {
          // Sessions from before ids were derived from the hash are found through the session table.
          const candidates = [derived, ...[await sessionIdByTokenHash(ctx, tokenHash)].filter((id): id is string => id !== null && id !== derived)];
          for (const sessionId of candidates) {
            const state = (await unit.load(streams.session(sessionId), sessionModel)).state;
            if (state.status !== 'active' || state.tokenHash !== tokenHash) continue;
            await decideOnTarget(unit, authorityOf(ctx, caller), state.userId);
            // Whoever's it is: the admin acts for its owner. An unknown token is a success, as better-auth answers.
            await decideOnSession(unit, sessionId, { type: 'revoke', byUserId: state.userId, reason: 'revoked_by_admin' });
            return;
          }
        },
      );
      return { success: true };
    });

    route(app, endpoints.revokeUserSessions, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { session: ['revoke'] }, 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS');
      const { userId } = request.body;
      await ctx.commands.handle(
        {
          name: 'admin.revoke-user-sessions',
          request: requestMetadataOf(request),
          actorId: caller.user.id,
          actorKind: 'admin',
          serialize: [streams.userSessions(userId)],
          settle: 'revocation',
        },
        async (unit) => {
          await decideOnTarget(unit, authorityOf(ctx, caller), userId);
          await endAllSessions(unit, userId, 'revoked_by_admin');
        },
      );
      return { success: true };
    });

    route(app, endpoints.impersonateUser, async (request, reply) => {
      // From an impersonation session this is refused too: a chain of impersonations would hide the first admin.
      const caller = await requireAdminAction(ctx, request, reply, { user: ['impersonate'] }, 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS');
      const target = await existingUser(ctx, request.body.userId);
      const requestMetadata = requestMetadataOf(request);
      const { result: opened } = await ctx.commands.handle(
        { name: 'admin.impersonate-user', request: requestMetadata, actorId: caller.user.id, actorKind: 'admin' },
        async (unit) => {
          const account = await accountIn(unit, target.id);
          if (account.state.status !== 'active') throw new DomainError('USER_NOT_FOUND');
          // better-auth's `impersonate-admins`, which no role holds: ADMIN_USER_IDS admins alone impersonate admins.
          await decideOnTarget(unit, authorityOf(ctx, caller), target.id, 'YOU_CANNOT_IMPERSONATE_ADMINS');
          // better-auth's session-create hook refuses a banned user here too.
          const ban = decideSignInBan(account.state, unit.now);
          if (ban.outcome === 'banned') throw new DomainError('BANNED_USER');
          unit.append(account.streamId, ban.events);
          const lifetimeMs = ctx.config.admin.impersonationSessionDurationSeconds * 1000;
          const created = newSession(ctx, requestMetadata, unit.now, false);
          const session = { ...created.session, expiresAt: new Date(unit.now.getTime() + lifetimeMs) };
          openImpersonationSession(unit, target.id, caller.user.id, session);
          return { token: created.token, session, at: unit.now.toISOString() };
        },
      );
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
      const adminId = current.session.impersonatedBy;
      if (!adminId) throw new DomainError('YOU_ARE_NOT_IMPERSONATING_ANYONE');
      const kept = adminSessionCookie(request, ctx.cookies);
      if (!kept) throw new DomainError('FAILED_TO_FIND_ADMIN_SESSION');
      const adminTokenHash = hashToken(kept.token);
      const adminSession = await findSessionByTokenHash(ctx, adminTokenHash);
      if (!adminSession || adminSession.session.userId !== adminId || Date.parse(adminSession.session.expiresAt) <= ctx.clock().getTime()) {
        throw new DomainError('FAILED_TO_FIND_ADMIN_SESSION');
      }
      // The request presents the impersonation session: its actor is the admin behind it, as for all it did there.
      await runSessionCommand(ctx, requestMetadataOf(request), current.session.id, { type: 'revoke', byUserId: current.user.id, reason: 'impersonation_ended' }, {
        actorId: current.user.id,
        settle: 'revocation',
      });
      expireCookieCache(ctx, request, reply);
      if (!kept.dontRemember) clearDontRemember(request, reply, ctx.cookies);
      setSessionCookie(reply, ctx.cookies, kept.token, { dontRemember: kept.dontRemember });
      clearAdminSessionCookie(reply, ctx.cookies);
      return sessionAnswer({ token: kept.token, tokenHash: adminTokenHash, presented: { token: kept.token, dontRemember: kept.dontRemember, via: 'cookie' }, ...adminSession });
    });
  };
}
