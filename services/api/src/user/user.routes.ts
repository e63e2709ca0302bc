import type { FastifyInstance } from 'fastify';
import { DomainError, streams, userEndpoints as endpoints } from '@portcullis/contracts';
import { commit, withRetryOnConflict } from '../commit.ts';
import type { ApiContext } from '../context.ts';
import { eventMetadata } from '../http/request-context.ts';
import { setSessionCookie } from '../http/session-cookies.ts';
import { route } from '../http/declared-route.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';
import { requireSession } from '../session/current-session.ts';
import { checkUsername, usernameChangeWrites } from '../username/username-claim.ts';
import { loadStream, streamWrite } from '../write-model.ts';
import { decideUpdateUser, evolveUser, initialUserState } from '../identity/user.decider.ts';

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
      // A lost race for a new username is retried on the newer state, where the decider refuses it as taken.
      await withRetryOnConflict(async () => {
        const streamId = streams.user(userId);
        const { state, version } = await loadStream(ctx.store, streamId, evolveUser, initialUserState);
        const events = decideUpdateUser(
          {
            ...(body.name !== undefined ? { name: body.name } : {}),
            ...(body.image !== undefined ? { image: body.image } : {}),
            ...(body.username !== undefined ? { username: body.username } : {}),
            ...(body.displayUsername !== undefined ? { displayUsername: body.displayUsername } : {}),
          },
          state,
        );
        const metadata = eventMetadata(request, ctx.clock(), userId);
        const renamed = events.find((e) => e.type === 'user.username_changed.v1');
        const reservations =
          renamed && state.status === 'registered'
            ? await usernameChangeWrites(ctx, { userId, from: state.username, to: renamed.data.username }, metadata)
            : [];
        await commit(ctx, [...reservations, streamWrite(streamId, version, events, metadata)]);
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
