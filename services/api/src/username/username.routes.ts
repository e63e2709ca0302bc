import type { FastifyInstance } from 'fastify';
import { DomainError, isDomainError, normalizeUsername, streams, usernameEndpoints as endpoints, UsernameSignInFailed } from '@portcullis/contracts';
import type { ApiContext } from '../context.ts';
import { enforceVerifiedEmail } from '../identity/account-model.ts';
import { openSignInSession, reservationHolder, signInWithPassword, type SignInIdentity } from '../identity/password-sign-in.ts';
import { checkPresentedPassword } from '../identity/password-policy.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { route } from '../http/declared-route.ts';
import { checkUsername, loadUsernameReservation, usernameReservationStream } from './username-claim.ts';
import { evolveUsernameReservation, initialUsernameReservation } from './username.decider.ts';

/** Sign-in by username: failures and locks on `sign-in-username-<username>`, the account by the reservation. */
function usernameSignInIdentity(ctx: ApiContext, username: string): SignInIdentity {
  return {
    identifier: username,
    guardStream: streams.usernameSignIn(username),
    reservationStream: usernameReservationStream(username),
    reservedFor: reservationHolder(evolveUsernameReservation, initialUsernameReservation),
    failure: (reason, userId) => UsernameSignInFailed({ username, userId, reason }),
    via: 'username',
    refusal: 'INVALID_USERNAME_OR_PASSWORD',
  };
}

/** better-auth's username plugin endpoints. */
export function usernameRoutes(ctx: ApiContext) {
  const trustedOrigins = ctx.config.trustedOrigins;
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.signInUsername, async (request, reply) => {
      const { body } = request;
      checkCallbackURL(body.callbackURL, trustedOrigins);
      if (!body.username || !body.password) throw new DomainError('INVALID_USERNAME_OR_PASSWORD');
      checkUsername(ctx.config.username, body.username);
      checkPresentedPassword(ctx.config, body.password);
      const username = normalizeUsername(body.username);

      return signInWithPassword(ctx, request, reply, usernameSignInIdentity(ctx, username), body.password, async (signIn) => {
        // After the password, as better-auth: only the account's owner learns that its email is unverified.
        await enforceVerifiedEmail(ctx, request, signIn.account, body.callbackURL).catch((error: unknown) => {
          if (isDomainError(error) && error.code === 'EMAIL_NOT_VERIFIED') throw new DomainError('USERNAME_EMAIL_NOT_VERIFIED');
          throw error;
        });
        return openSignInSession(ctx, request, reply, signIn, { ...body, method: 'username-password' });
      });
    });

    route(app, endpoints.isUsernameAvailable, async (request) => {
      const { body } = request;
      if (!body.username) throw new DomainError('INVALID_USERNAME');
      checkUsername(ctx.config.username, body.username);
      const { state } = await loadUsernameReservation(ctx, body.username);
      return { available: state.status === 'free' };
    });
  };
}
