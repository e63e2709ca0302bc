import type { FastifyInstance } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError } from '@portcullis/contracts';
import type { AccountPorts } from './ports.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';
import { requireSession } from '../session/current-session.ts';
import { changeEmail } from './change-email.command.ts';

/**
 * Spec section 4: an unverified user's email changes at once (and a verification mail goes to the new
 * address); a verified user first confirms from the current address, and the link then moves the email,
 * unverified, and mails a verification link to the new address (email-verification.routes.ts).
 */
export function changeEmailRoutes(ctx: AccountPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.changeEmail, async (request, reply) => {
      if (!ctx.config.changeEmail.enabled) throw new DomainError('CHANGE_EMAIL_DISABLED');
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      checkCallbackURL(body.callbackURL, ctx.config.trustedOrigins);
      const to = body.newEmail.toLowerCase();
      const userId = current.user.id;
      if (to === current.user.email) throw new DomainError('EMAIL_IS_THE_SAME');

      const moved = await changeEmail(ctx, requestMetadataOf(request), { userId, newEmail: to, callbackURL: body.callbackURL });
      if (moved) expireCookieCache(ctx, request, reply);
      return { status: true };
    });
  };
}
