import type { FastifyInstance } from 'fastify';
import { DomainError, normalizeUsername, streams, UsernameSignInFailed, usernameEndpoints as endpoints } from '@portcullis/contracts';
import type { UsernamePorts } from './ports.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { answerSignIn } from '../http/sign-in-answer.ts';
import { openSignInSession, signInWithPassword, type SignInIdentity } from '../identity/sign-in-with-password.command.ts';
import { checkPresentedPassword } from '../identity/password-policy.ts';
import { checkUsername, readUsernameReservation, usernameReservationStream } from '../identity/username-claim.ts';
import { usernameReservationModel } from '../identity/username.decider.ts';

/** Sign-in by username: failures and locks on `sign-in-username-<username>`, the account by the reservation. */
function usernameSignInIdentity(username: string): SignInIdentity {
  return {
    identifier: username,
    guardStream: streams.usernameSignIn(username),
    reservationStream: usernameReservationStream(username),
    reservationModel: usernameReservationModel,
    failure: (reason, userId) => UsernameSignInFailed({ username, userId, reason }),
    via: 'username',
    refusal: 'INVALID_USERNAME_OR_PASSWORD',
    unverified: 'USERNAME_EMAIL_NOT_VERIFIED',
  };
}

/** better-auth's username plugin endpoints. */
export function usernameRoutes(ctx: UsernamePorts) {
  const trustedOrigins = ctx.config.trustedOrigins;
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.signInUsername, async (request, reply) => {
      const { body } = request;
      checkCallbackURL(body.callbackURL, trustedOrigins);
      if (!body.username || !body.password) throw new DomainError('INVALID_USERNAME_OR_PASSWORD');
      checkUsername(ctx.config.username, body.username);
      checkPresentedPassword(ctx.config, body.password);
      const username = normalizeUsername(body.username);

      const opened = await signInWithPassword(ctx, requestMetadataOf(request), usernameSignInIdentity(username), body.password, body.callbackURL, (signIn) =>
        openSignInSession(ctx, signIn, { ...body, method: 'username-password' }),
      );
      return answerSignIn(ctx.cookies, request, reply, opened);
    });

    route(app, endpoints.isUsernameAvailable, async (request) => {
      const { body } = request;
      if (!body.username) throw new DomainError('INVALID_USERNAME');
      checkUsername(ctx.config.username, body.username);
      return { available: (await readUsernameReservation(ctx, body.username)).status === 'free' };
    });
  };
}
