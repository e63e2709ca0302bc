import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError, streams, type ErrorCode } from '@portcullis/contracts';
import { signEmailVerificationToken, verifyEmailVerificationToken, type EmailVerificationClaims } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { route } from '../http/declared-route.ts';
import { withMinimumDuration } from '../http/equal-timing.ts';
import { redirect, redirectLocation } from '../http/redirect.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { setSessionCookie } from '../http/session-cookies.ts';
import { accountByEmailIn, activeAccountIn, moveEmail, queueVerificationMail } from '../identity/account-model.ts';
import { decideAccount, decideSignInBan } from '../identity/account.decider.ts';
import { findUserById } from '../identity/user-queries.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';
import { resolveSession } from '../session/current-session.ts';
import { newSession } from '../session/new-session.ts';
import { openSession } from '../session/session-lifecycle.ts';

/** better-auth's floor on send-verification-email for callers without a session. */
const UNAUTHENTICATED_FLOOR_MS = 500;

/** The verify-email failures and the `error=` value each redirects with (spec section 8). */
const redirectCodes = {
  TOKEN_EXPIRED: 'token_expired',
  INVALID_TOKEN: 'invalid_token',
  USER_NOT_FOUND: 'user_not_found',
  UNAUTHORIZED: 'unauthorized',
  COULDNT_UPDATE_YOUR_EMAIL: 'couldnt_update_your_email',
} as const satisfies Partial<Record<ErrorCode, string>>;
type VerifyFailure = keyof typeof redirectCodes;

export function emailVerificationRoutes(ctx: ApiContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.sendVerificationEmail, async (request, reply) => {
      if (!ctx.config.emailVerification.enabled) throw new DomainError('VERIFICATION_EMAIL_NOT_ENABLED');
      const { body } = request;
      checkCallbackURL(body.callbackURL, ctx.config.trustedOrigins);
      const email = body.email.toLowerCase();
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      const command = { name: 'send-verification-email', request: requestMetadataOf(request), actorId: current?.user.id ?? null };

      if (!current) {
        // Anyone may ask; the answer and its timing must not tell whether the address has an unverified account.
        await withMinimumDuration(UNAUTHENTICATED_FLOOR_MS, () =>
          ctx.commands.handle(command, async (unit) => {
            const account = await accountByEmailIn(unit, email);
            if (account && !account.state.emailVerified) {
              await queueVerificationMail(unit, ctx, account.state, body.callbackURL);
              return;
            }
            // The same signing work as a mail would cost, for nothing.
            await signEmailVerificationToken({ email }, ctx.config.secret, ctx.config.emailVerification.expiresInSeconds, unit.now);
          }),
        );
        return { status: true };
      }

      if (current.user.email.toLowerCase() !== email) throw new DomainError('EMAIL_MISMATCH');
      if (current.user.emailVerified) throw new DomainError('EMAIL_ALREADY_VERIFIED');
      await ctx.commands.handle(command, async (unit) => {
        const account = await activeAccountIn(unit, current.user.id);
        await queueVerificationMail(unit, ctx, account.state, body.callbackURL);
      });
      return { status: true };
    });

    route(app, endpoints.verifyEmail, async (request, reply) => {
      const { query } = request;
      checkCallbackURL(query.callbackURL, ctx.config.trustedOrigins);
      // What the success redirect sends, decided before the link changes anything.
      const location = query.callbackURL ? redirectLocation(query.callbackURL, ctx.config.trustedOrigins) : null;
      try {
        const verified = await verifyEmailVerificationToken(query.token, ctx.config.secret, ctx.clock());
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
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  claims: EmailVerificationClaims,
): Promise<{ status: true; user: null }> {
  const email = claims.email.toLowerCase();
  // Signed in already as this address: verifying it opens no second session.
  const current = ctx.config.emailVerification.autoSignIn ? await resolveSession(ctx, request, reply, { refresh: false }) : null;
  const opensSession = ctx.config.emailVerification.autoSignIn && (!current || current.user.email !== email);
  const requestMetadata = requestMetadataOf(request);
  const { result: verified } = await ctx.commands.handle(
    { name: 'verify-email', request: requestMetadata, actorId: null },
    async (unit) => {
      const account = await accountByEmailIn(unit, email);
      if (!account) throw new DomainError('USER_NOT_FOUND');
      if (claims.userId !== undefined && claims.userId !== account.state.userId) throw new DomainError('INVALID_TOKEN');
      unit.actAs(account.state.userId);
      // A link used again is a success that changes nothing, as in better-auth.
      if (account.state.emailVerified) return null;
      unit.append(account.streamId, decideAccount({ type: 'verify-email', email }, account.state));
      if (!opensSession) return { signIn: null };
      // As better-auth: the address is verified, and the session its hook refuses a banned user is not opened.
      const ban = decideSignInBan(account.state, unit.now);
      if (ban.outcome === 'banned') return { signIn: null, banned: true };
      unit.append(account.streamId, ban.events);
      const opened = newSession(ctx, requestMetadata, unit.now, true);
      openSession(unit, account.state.userId, opened.session, 'email-verification');
      return { signIn: opened };
    },
  );
  if (!verified) return { status: true as const, user: null };
  if ('banned' in verified) throw new DomainError('BANNED_USER');
  expireCookieCache(ctx, request, reply);
  if (verified.signIn) setSessionCookie(reply, ctx.cookies, verified.signIn.token, { dontRemember: false });
  return { status: true as const, user: null };
}

/**
 * A change-of-email link. The confirmation mailed to the current address (and better-auth's legacy link
 * without a request type) moves the user to the new address at once, unverified, and mails a verification
 * link there; better-auth's second step (`change-email-verification`) moves it keeping the verified flag.
 */
async function changeEmailFromLink(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  claims: EmailVerificationClaims,
  callbackURL: string | undefined,
): Promise<{ status: true; user?: unknown }> {
  const to = claims.updateTo!.toLowerCase();
  const from = claims.email.toLowerCase();
  if (!claims.userId) throw new DomainError('INVALID_TOKEN');
  const userId = claims.userId;
  const current = await resolveSession(ctx, request, reply, { refresh: false });
  await ctx.commands.handle(
    { name: 'change-email.confirm', request: requestMetadataOf(request), actorId: userId, serialize: [streams.user(userId)] },
    async (unit) => {
      const account = await activeAccountIn(unit, userId);
      // Once the email has moved, the link's address is no longer the user's: a link works once.
      if (account.state.email !== from) throw new DomainError('INVALID_TOKEN');
      if (current && current.user.id !== userId) throw new DomainError('UNAUTHORIZED');
      const keepsVerified = claims.requestType === 'change-email-verification' && account.state.emailVerified;
      // Someone taking the new address between the request and the click: COULDNT_UPDATE_YOUR_EMAIL.
      await moveEmail(unit, ctx, account, to, { verified: keepsVerified, callbackURL });
    },
  );
  expireCookieCache(ctx, request, reply);
  if (claims.requestType === 'change-email-confirmation') return { status: true };
  return { status: true, user: await findUserById(ctx, userId) };
}
