import type { FastifyInstance } from 'fastify';
import { DomainError, streams, userEndpoints as endpoints } from '@portcullis/contracts';
import type { ApiContext } from '../context.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { setSessionCookie } from '../http/session-cookies.ts';
import { decideUpdateUser, userModel } from '../identity/user.decider.ts';
import { checkUsername, moveUsernameReservation } from '../identity/username-claim.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';
import { requireSession } from '../session/current-session.ts';

export function userRoutes(ctx: ApiContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.updateUser, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      if (body.email !== undefined && body.email !== null && body.email !== '') {
        throw new DomainError('EMAIL_CAN_NOT_BE_UPDATED');
      }
      if (body.username !== undefined) checkUsername(ctx.config.username, body.username);
      const userId = current.user.id;
      await ctx.commands.handle(
        { name: 'update-user', request: requestMetadataOf(request), actorId: userId, serialize: [streams.user(userId)] },
        async (unit) => {
          const user = await unit.load(streams.user(userId), userModel);
          const events = decideUpdateUser(
            {
              ...(body.name !== undefined ? { name: body.name } : {}),
              ...(body.image !== undefined ? { image: body.image } : {}),
              ...(body.username !== undefined ? { username: body.username } : {}),
              ...(body.displayUsername !== undefined ? { displayUsername: body.displayUsername } : {}),
            },
            user.state,
          );
          unit.append(user.streamId, events);
          // A new username is claimed in the same append (refused when taken); the old one is released.
          const renamed = events.find((e) => e.type === 'user.username_changed.v1');
          if (renamed && user.state.status === 'registered') {
            await moveUsernameReservation(unit, { userId, from: user.state.username, to: renamed.data.username });
          }
        },
      );
      // better-auth re-sends the session cookie with the updated user; a cookie cache of the old one goes.
      expireCookieCache(ctx, request, reply);
      setSessionCookie(reply, ctx.cookies, current.token, {
        dontRemember: current.presented.dontRemember || !current.session.rememberMe,
      });
      return { status: true };
    });
  };
}
