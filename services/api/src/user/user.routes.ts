import type { FastifyInstance } from 'fastify';
import { DomainError, streams, updateUserBodySchema } from '@portcullis/contracts';
import { commit, withRetryOnConflict } from '../commit.ts';
import type { ApiContext } from '../context.ts';
import { eventMetadata } from '../http/request-context.ts';
import { setSessionCookie } from '../http/session-cookies.ts';
import { parseBody } from '../http/validation.ts';
import { requireSession } from '../session/current-session.ts';
import { loadStream, streamWrite } from '../write-model.ts';
import { decideUpdateUser, evolveUser, initialUserState } from './user.decider.ts';

export function userRoutes(ctx: ApiContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.post('/update-user', async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const body = parseBody(updateUserBodySchema, request.body);
      if (body.email !== undefined && body.email !== null && body.email !== '') {
        throw new DomainError('EMAIL_CAN_NOT_BE_UPDATED');
      }
      const userId = current.user.id;
      await withRetryOnConflict(async () => {
        const streamId = streams.user(userId);
        const { state, version } = await loadStream(ctx.store, streamId, evolveUser, initialUserState);
        const events = decideUpdateUser(
          { ...(body.name !== undefined ? { name: body.name } : {}), ...(body.image !== undefined ? { image: body.image } : {}) },
          state,
        );
        await commit(ctx, [streamWrite(streamId, version, events, eventMetadata(request, ctx.clock(), userId))]);
      });
      // better-auth re-sends the session cookie with the updated user.
      setSessionCookie(reply, ctx.cookies, current.token, {
        dontRemember: current.presented.dontRemember || !current.session.rememberMe,
      });
      return { status: true };
    });
  };
}
