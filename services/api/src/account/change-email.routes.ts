import type { FastifyInstance } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError, streams } from '@portcullis/contracts';
import { signEmailVerificationToken } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { activeAccountIn, emailReservationIn, moveEmail } from '../identity/account-model.ts';
import { queueMail } from '../mail/mail-jobs.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';
import { requireSession } from '../session/current-session.ts';

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

      const { result: moved } = await ctx.commands.handle(
        { name: 'change-email', request: requestMetadataOf(request), actorId: userId, serialize: [streams.user(userId)] },
        async (unit) => {
          const account = await activeAccountIn(unit, userId);
          if (!account.state.emailVerified) {
            await moveEmail(unit, ctx, account, to, { verified: false, callbackURL: body.callbackURL });
            return true;
          }
          // A verified address confirms the change first: a link to it, which moves the email when followed.
          if (!ctx.config.emailVerification.enabled) throw new DomainError('VERIFICATION_EMAIL_NOT_ENABLED');
          if ((await emailReservationIn(unit, to)).state.status === 'reserved') throw new DomainError('COULDNT_UPDATE_YOUR_EMAIL');
          const expiresIn = ctx.config.emailVerification.expiresInSeconds;
          const token = await signEmailVerificationToken(
            { email: account.state.email, updateTo: to, requestType: 'change-email-confirmation', userId },
            ctx.config.secret,
            expiresIn,
            unit.now,
          );
          queueMail(unit, ctx, {
            kind: 'change-email',
            userId,
            to: account.state.email,
            name: account.state.name,
            token,
            callbackURL: body.callbackURL ?? null,
            expiresAt: new Date(unit.now.getTime() + expiresIn * 1000),
            newEmail: to,
          });
          return false;
        },
      );
      if (moved) expireCookieCache(ctx, request, reply);
      return { status: true };
    });
  };
}
