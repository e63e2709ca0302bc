import type { FastifyInstance } from 'fastify';
import { DomainError, userEndpoints as endpoints } from '@portcullis/contracts';
import type { UserPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { setSessionCookie } from '../http/session-cookies.ts';
import { checkUsername } from '../identity/username-claim.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';
import { requireSession } from '../session/current-session.ts';
import { updateUser } from './update-user.command.ts';

export function userRoutes(ctx: UserPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.updateUser, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      if (body.email !== undefined && body.email !== null && body.email !== '') {
        throw new DomainError('EMAIL_CAN_NOT_BE_UPDATED');
      }
      if (body.username !== undefined) checkUsername(ctx.config.username, body.username);
      await updateUser(ctx, requestMetadataOf(request), {
        userId: current.user.id,
        changes: {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.image !== undefined ? { image: body.image } : {}),
          ...(body.username !== undefined ? { username: body.username } : {}),
          ...(body.displayUsername !== undefined ? { displayUsername: body.displayUsername } : {}),
        },
      });
      // better-auth re-sends the session cookie with the updated user; a cookie cache of the old one goes.
      expireCookieCache(ctx, request, reply);
      setSessionCookie(reply, ctx.cookies, current.token, {
        dontRemember: current.presented.dontRemember || !current.session.rememberMe,
      });
      return { status: true };
    });
  };
}
