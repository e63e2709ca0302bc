import type { FastifyInstance } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError, streams } from '@portcullis/contracts';
import { signEmailVerificationToken, WrongExpectedVersionError } from '@portcullis/platform';
import { commit, withRetryOnConflict } from '../commit.ts';
import type { ApiContext } from '../context.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { eventMetadata } from '../http/request-context.ts';
import { route } from '../http/declared-route.ts';
import { requireSession } from '../session/current-session.ts';
import { emailMoveWrites, loadAccount, loadReservation, mailJobWrite } from '../identity/account-model.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';

/**
 * Spec section 4: an unverified user's email changes at once (and a verification mail goes to the new
 * address); a verified user first confirms from the current address, and the link then moves the email,
 * unverified, and mails a verification link to the new address (email-verification.routes.ts).
 */
export function changeEmailRoutes(ctx: ApiContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.changeEmail, async (request, reply) => {
      if (!ctx.config.changeEmail.enabled) throw new DomainError('CHANGE_EMAIL_DISABLED');
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      checkCallbackURL(body.callbackURL, ctx.config.trustedOrigins);
      const to = body.newEmail.toLowerCase();
      const userId = current.user.id;
      if (to === current.user.email) throw new DomainError('EMAIL_IS_THE_SAME');

      const initial = await loadAccount(ctx, userId);
      if (initial.state.status !== 'active') throw new DomainError('USER_NOT_FOUND');
      if (initial.state.emailVerified) {
        if (!ctx.config.emailVerification.enabled) throw new DomainError('VERIFICATION_EMAIL_NOT_ENABLED');
        if ((await loadReservation(ctx, to)).state.status === 'reserved') throw new DomainError('COULDNT_UPDATE_YOUR_EMAIL');
        const now = ctx.clock();
        const expiresIn = ctx.config.emailVerification.expiresInSeconds;
        const token = await signEmailVerificationToken(
          { email: initial.state.email, updateTo: to, requestType: 'change-email-confirmation', userId },
          ctx.config.secret,
          expiresIn,
          now,
        );
        await ctx.store.append([
          mailJobWrite(
            ctx,
            {
              kind: 'change-email',
              userId,
              to: initial.state.email,
              name: initial.state.name,
              token,
              callbackURL: body.callbackURL ?? null,
              expiresAt: new Date(now.getTime() + expiresIn * 1000),
              newEmail: to,
            },
            eventMetadata(request, now, userId),
          ),
        ]);
        return { status: true };
      }

      try {
        await withRetryOnConflict(async () => {
          const account = await loadAccount(ctx, userId);
          if (account.state.status !== 'active') throw new DomainError('USER_NOT_FOUND');
          const now = ctx.clock();
          const writes = await emailMoveWrites(ctx, { version: account.version, state: account.state }, to, {
            verified: false,
            callbackURL: body.callbackURL,
            now,
            metadata: eventMetadata(request, now, userId),
          });
          await commit(ctx, writes);
        });
      } catch (error) {
        if (error instanceof WrongExpectedVersionError && error.streamId === streams.email(to)) throw new DomainError('COULDNT_UPDATE_YOUR_EMAIL');
        throw error;
      }
      expireCookieCache(ctx, request, reply);
      return { status: true };
    });
  };
}
