import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError, type ErrorCode } from '@portcullis/contracts';
import { verifyEmailVerificationToken, type EmailVerificationClaims } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { route } from '../http/declared-route.ts';
import { redirect, redirectLocation } from '../http/redirect.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { setSessionCookie } from '../http/session-cookies.ts';
import { findUserById } from '../identity/user-queries.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';
import { resolveSession } from '../session/current-session.ts';
import { confirmEmailChange } from './confirm-email-change.command.ts';
import { sendVerificationEmail } from './send-verification-email.command.ts';
import { verifyEmail } from './verify-email.command.ts';

/** The verify-email failures and the `error=` value each redirects with (spec section 8). */
const redirectCodes = {
  TOKEN_EXPIRED: 'token_expired',
  INVALID_TOKEN: 'invalid_token',
  USER_NOT_FOUND: 'user_not_found',
  UNAUTHORIZED: 'unauthorized',
  COULDNT_UPDATE_YOUR_EMAIL: 'couldnt_update_your_email',
} as const satisfies Partial<Record<ErrorCode, string>>;
type VerifyFailure = keyof typeof redirectCodes;

export function emailVerificationRoutes(ctx: AccountPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.sendVerificationEmail, async (request, reply) => {
      if (!ctx.config.emailVerification.enabled) throw new DomainError('VERIFICATION_EMAIL_NOT_ENABLED');
      const { body } = request;
      checkCallbackURL(body.callbackURL, ctx.config.trustedOrigins);
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      const signedIn = current ? { userId: current.user.id, email: current.user.email, emailVerified: current.user.emailVerified } : null;
      await sendVerificationEmail(ctx, requestMetadataOf(request), { email: body.email.toLowerCase(), callbackURL: body.callbackURL, signedIn });
      return { status: true };
    });

    route(app, endpoints.verifyEmail, async (request, reply) => {
      const { query } = request;
      checkCallbackURL(query.callbackURL, ctx.config.trustedOrigins);
      // What the success redirect sends, decided before the link changes anything.
      const location = query.callbackURL ? redirectLocation(query.callbackURL, ctx.config.trustedOrigins) : null;
      try {
        const verified = await verifyEmailVerificationToken(query.token, ctx.config.secrets, ctx.clock());
        if (!verified.ok) throw new DomainError(verified.reason === 'expired' ? 'TOKEN_EXPIRED' : 'INVALID_TOKEN');
        const claims = verified.claims;
        const answer = claims.updateTo
          ? await changeEmailFromLink(ctx, request, reply, claims, query.callbackURL)
          : await verifyEmailFromLink(ctx, request, reply, claims);
        if (location) return redirect(reply, location);
        return answer;
      } catch (error) {
        const code = error instanceof DomainError && error.code in redirectCodes ? (error.code as VerifyFailure) : null;
        if (code === null) throw error;
        if (query.callbackURL) {
          return redirect(reply, redirectLocation(query.callbackURL, ctx.config.trustedOrigins, { params: { error: redirectCodes[code] } }));
        }
        // better-auth answers every failure of the link 401 when there is no callbackURL to send it to.
        throw new DomainError(code, { status: 401 });
      }
    });
  };
}

/** A plain verification link: the address it was sent to becomes verified (and, if configured, signs in). */
async function verifyEmailFromLink(
  ctx: AccountPorts,
  request: FastifyRequest,
  reply: FastifyReply,
  claims: EmailVerificationClaims,
): Promise<{ status: true; user: null }> {
  const { autoSignIn } = ctx.config.emailVerification;
  // Signed in already as this address: verifying it opens no second session.
  const current = autoSignIn ? await resolveSession(ctx, request, reply, { refresh: false }) : null;
  const opensSession = autoSignIn && (!current || current.user.email !== claims.email.toLowerCase());
  const verified = await verifyEmail(ctx, requestMetadataOf(request), { claims, opensSession });
  if (!verified.changed) return { status: true as const, user: null };
  if (verified.banned) throw new DomainError('BANNED_USER');
  expireCookieCache(ctx, request, reply);
  if (verified.signIn) setSessionCookie(reply, ctx.cookies, verified.signIn.token, { dontRemember: false });
  return { status: true as const, user: null };
}

/** A change-of-email link (see `confirmEmailChange`); the second step answers the user as moved. */
async function changeEmailFromLink(
  ctx: AccountPorts,
  request: FastifyRequest,
  reply: FastifyReply,
  claims: EmailVerificationClaims,
  callbackURL: string | undefined,
): Promise<{ status: true; user?: unknown }> {
  const current = await resolveSession(ctx, request, reply, { refresh: false });
  await confirmEmailChange(ctx, requestMetadataOf(request), { claims, signedInAs: current?.user.id ?? null, callbackURL });
  expireCookieCache(ctx, request, reply);
  if (claims.requestType === 'change-email-confirmation') return { status: true };
  return { status: true, user: await findUserById(ctx, claims.userId!) };
}
