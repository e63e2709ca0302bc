import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError, streams, type ErrorCode } from '@portcullis/contracts';
import { signEmailVerificationToken, verifyEmailVerificationToken, WrongExpectedVersionError, type EmailVerificationClaims } from '@portcullis/platform';
import { commit, withRetryOnConflict } from '../commit.ts';
import type { ApiContext } from '../context.ts';
import { newSession } from '../session/new-session.ts';
import { sessionOpeningEvents } from '../session/session-lifecycle.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { withMinimumDuration } from '../http/equal-timing.ts';
import { redirect, redirectLocation } from '../http/redirect.ts';
import { eventMetadata, requestMetadataOf } from '../http/request-context.ts';
import { setSessionCookie } from '../http/session-cookies.ts';
import { route } from '../http/declared-route.ts';
import { resolveSession } from '../session/current-session.ts';
import { findUserById } from '../identity/user-queries.ts';
import { streamWrite } from '../write-model.ts';
import { decideAccount } from '../identity/account.decider.ts';
import { emailMoveWrites, loadAccount, loadAccountByEmail, verificationMailWrite } from '../identity/account-model.ts';
import { expireCookieCache } from '../session/cookie-cache.ts';

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

class VerifyEmailFailure extends Error {
  constructor(readonly code: VerifyFailure) {
    super(code);
  }
}

export function emailVerificationRoutes(ctx: ApiContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.sendVerificationEmail, async (request, reply) => {
      if (!ctx.config.emailVerification.enabled) throw new DomainError('VERIFICATION_EMAIL_NOT_ENABLED');
      const { body } = request;
      checkCallbackURL(body.callbackURL, ctx.config.trustedOrigins);
      const email = body.email.toLowerCase();
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      const now = ctx.clock();

      if (!current) {
        // Anyone may ask; the answer and its timing must not tell whether the address has an unverified account.
        await withMinimumDuration(UNAUTHENTICATED_FLOOR_MS, async () => {
          const found = await loadAccountByEmail(ctx, email);
          if (!found || found.account.state.emailVerified) {
            await signEmailVerificationToken({ email }, ctx.config.secret, ctx.config.emailVerification.expiresInSeconds, now);
            return;
          }
          const account = found.account.state;
          await ctx.store.append([
            await verificationMailWrite(ctx, account, body.callbackURL, now, eventMetadata(request, now, null)),
          ]);
        });
        return { status: true };
      }

      if (current.user.email.toLowerCase() !== email) throw new DomainError('EMAIL_MISMATCH');
      if (current.user.emailVerified) throw new DomainError('EMAIL_ALREADY_VERIFIED');
      const { state } = await loadAccount(ctx, current.user.id);
      if (state.status !== 'active') throw new DomainError('USER_NOT_FOUND');
      await ctx.store.append([
        await verificationMailWrite(ctx, state, body.callbackURL, now, eventMetadata(request, now, current.user.id)),
      ]);
      return { status: true };
    });

    route(app, endpoints.verifyEmail, async (request, reply) => {
      const { query } = request;
      checkCallbackURL(query.callbackURL, ctx.config.trustedOrigins);
      // What the success redirect sends, decided before the link changes anything.
      const location = query.callbackURL ? redirectLocation(query.callbackURL, ctx.config.trustedOrigins) : null;
      try {
        const verified = await verifyEmailVerificationToken(query.token, ctx.config.secret, ctx.clock());
        if (!verified.ok) throw new VerifyEmailFailure(verified.reason === 'expired' ? 'TOKEN_EXPIRED' : 'INVALID_TOKEN');
        const claims = verified.claims;
        const answer = claims.updateTo
          ? await changeEmailFromLink(ctx, request, reply, claims, query.callbackURL)
          : await verifyEmailFromLink(ctx, request, reply, claims);
        if (location) return redirect(reply, location);
        return answer;
      } catch (error) {
        const code = error instanceof VerifyEmailFailure ? error.code : error instanceof DomainError && error.code in redirectCodes ? (error.code as VerifyFailure) : null;
        if (code === null) throw error;
        if (query.callbackURL) {
          return redirect(reply, redirectLocation(query.callbackURL, ctx.config.trustedOrigins, { params: { error: redirectCodes[code] } }));
        }
        throw new DomainError(code);
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
  return withRetryOnConflict(async () => {
    const found = await loadAccountByEmail(ctx, email);
    if (!found) throw new VerifyEmailFailure('USER_NOT_FOUND');
    const account = found.account.state;
    if (claims.userId !== undefined && claims.userId !== account.userId) throw new VerifyEmailFailure('INVALID_TOKEN');
    // A link used again is a success that changes nothing, as in better-auth.
    if (account.emailVerified) return { status: true as const, user: null };

    const now = ctx.clock();
    const metadata = eventMetadata(request, now, account.userId);
    const writes = [streamWrite(streams.user(account.userId), found.account.version, decideAccount({ type: 'verify-email', email }, account), metadata)];
    let signIn: ReturnType<typeof newSession> | null = null;
    if (ctx.config.emailVerification.autoSignIn) {
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      if (!current || current.user.email !== email) {
        signIn = newSession(ctx, requestMetadataOf(request), now, true);
        const opening = sessionOpeningEvents(account.userId, signIn.session, 'email-verification');
        writes.push(
          streamWrite(streams.session(signIn.session.sessionId), 'no_stream', [opening.session], metadata),
          streamWrite(streams.userSessions(account.userId), 'any', [opening.index], metadata),
        );
      }
    }
    await commit(ctx, writes);
    expireCookieCache(ctx, request, reply);
    if (signIn) setSessionCookie(reply, ctx.cookies, signIn.token, { dontRemember: false });
    return { status: true as const, user: null };
  });
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
  if (!claims.userId) throw new VerifyEmailFailure('INVALID_TOKEN');
  const userId = claims.userId;
  try {
    await withRetryOnConflict(async () => {
      const account = await loadAccount(ctx, userId);
      if (account.state.status !== 'active') throw new VerifyEmailFailure('USER_NOT_FOUND');
      // Once the email has moved, the link's address is no longer the user's: a link works once.
      if (account.state.email !== from) throw new VerifyEmailFailure('INVALID_TOKEN');
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      if (current && current.user.id !== userId) throw new VerifyEmailFailure('UNAUTHORIZED');

      const keepsVerified = claims.requestType === 'change-email-verification' && account.state.emailVerified;
      const now = ctx.clock();
      const writes = await emailMoveWrites(ctx, { version: account.version, state: account.state }, to, {
        verified: keepsVerified,
        callbackURL,
        now,
        metadata: eventMetadata(request, now, userId),
      });
      await commit(ctx, writes);
    });
    expireCookieCache(ctx, request, reply);
  } catch (error) {
    // Someone took the new address between the request and the click.
    if (error instanceof WrongExpectedVersionError && error.streamId === streams.email(to)) throw new VerifyEmailFailure('COULDNT_UPDATE_YOUR_EMAIL');
    throw error;
  }
  if (claims.requestType === 'change-email-confirmation') return { status: true };
  return { status: true, user: await findUserById(ctx, userId) };
}
