import type { FastifyInstance } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError } from '@portcullis/contracts';
import type { AccountPorts } from './ports.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { redirect, redirectLocation } from '../http/redirect.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { checkPresentedPassword } from '../identity/password-policy.ts';
import { clearSessionCookies } from '../http/session-cookies.ts';
import { route } from '../http/declared-route.ts';
import { requireSession, resolveSession, sessionIsFresh } from '../session/current-session.ts';
import { deleteUser } from './delete-user.command.ts';
import { mailDeletionLink } from './mail-deletion-link.command.ts';

export function deleteUserRoutes(ctx: AccountPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.deleteUser, async (request, reply) => {
      // Off by default, as in better-auth, which then answers as if the route did not exist.
      if (!ctx.config.deleteUser.enabled) throw new DomainError('NOT_FOUND');
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      checkCallbackURL(body.callbackURL, ctx.config.trustedOrigins);
      const userId = current.user.id;
      if (body.password) checkPresentedPassword(ctx.config, body.password);
      const password = body.password ? { password: body.password } : {};
      if (body.token) {
        await deleteUser(ctx, requestMetadataOf(request), { userId, authority: { token: body.token, ...password } });
        clearSessionCookies(reply, ctx.cookies);
        return { success: true, message: 'User deleted' };
      }
      if (ctx.config.deleteUser.sendVerification) {
        await mailDeletionLink(ctx, requestMetadataOf(request), { userId, password: body.password || undefined, callbackURL: body.callbackURL });
        return { success: true, message: 'Verification email sent' };
      }
      // Spec section 5: the right password, or a fresh session; better-auth refuses a stale one as expired.
      if (!body.password && !sessionIsFresh(ctx, current)) throw new DomainError('SESSION_EXPIRED');
      await deleteUser(ctx, requestMetadataOf(request), { userId, authority: password });
      clearSessionCookies(reply, ctx.cookies);
      return { success: true, message: 'User deleted' };
    });

    route(app, endpoints.deleteUserCallback, async (request, reply) => {
      if (!ctx.config.deleteUser.enabled) throw new DomainError('NOT_FOUND');
      const { query } = request;
      checkCallbackURL(query.callbackURL, ctx.config.trustedOrigins);
      // Decided before the user is deleted: a refusal after it would leave a deletion no client was told of.
      const location = query.callbackURL ? redirectLocation(query.callbackURL, ctx.config.trustedOrigins) : null;
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      if (!current) throw new DomainError('FAILED_TO_GET_USER_INFO');
      await deleteUser(ctx, requestMetadataOf(request), { userId: current.user.id, authority: { token: query.token } });
      clearSessionCookies(reply, ctx.cookies);
      if (location) return redirect(reply, location);
      return { success: true, message: 'User deleted' };
    });
  };
}
