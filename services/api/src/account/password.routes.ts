import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError, streams } from '@portcullis/contracts';
import { generateId, hashPassword, hashToken, loadStream, randomString } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { newSession } from '../session/new-session.ts';
import { checkNewPassword, checkPresentedPassword, passwordCheck } from '../identity/password-policy.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { withMinimumDuration } from '../http/equal-timing.ts';
import { redirect, redirectLocation } from '../http/redirect.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { serverCall } from '../http/server-call.ts';
import { clearDontRemember, setSessionCookie } from '../http/session-cookies.ts';
import { route, type DeclaredRequest } from '../http/declared-route.ts';
import { requireSession, resolveSession } from '../session/current-session.ts';
import { endAllSessions, endImpersonationsOpenedBy, openSession } from '../session/session-lifecycle.ts';
import { decideAccount } from '../identity/account.decider.ts';
import { accountByEmailIn, accountIn, activeAccountIn, readAccount } from '../identity/account-model.ts';
import { queueMail } from '../mail/mail-jobs.ts';
import { decidePasswordResetLink, passwordResetModel } from './password-reset.decider.ts';
import { decideVerificationToken, initialVerificationToken, usableBy, verificationTokenModel } from './verification-token.decider.ts';

/** Spec section 9: reset tokens are 24 random characters (better-auth's generateId(24), [a-zA-Z0-9]). */
const RESET_TOKEN_LENGTH = 24;
/**
 * Both answers (known and unknown address) take at least this long, so timing does not tell which emails
 * have accounts; it is well above what the known path's lookups, append and sealing cost.
 */
const RESET_REQUEST_FLOOR_MS = 400;
const RESET_REQUEST_ANSWER = {
  status: true,
  message: 'If this email exists in our system, check your email for the reset link',
} as const;

function readToken(ctx: ApiContext, tokenHash: string) {
  return loadStream(ctx.store, streams.verification(tokenHash), verificationTokenModel);
}

export function passwordRoutes(ctx: ApiContext) {
  /** Where better-auth resolves a reset callbackURL: against its base URL (base path included). */
  const authBase = `${ctx.config.baseUrl}${ctx.config.basePath}`;

  const requestReset = async (request: DeclaredRequest<typeof endpoints.requestPasswordReset | typeof endpoints.forgetPassword>) => {
    if (!ctx.config.resetPassword.enabled) throw new DomainError('RESET_PASSWORD_DISABLED');
    const { body } = request;
    checkCallbackURL(body.redirectTo, ctx.config.trustedOrigins, 'INVALID_REDIRECT_URL');
    const email = body.email.toLowerCase();
    await withMinimumDuration(RESET_REQUEST_FLOOR_MS, async () => {
      const token = randomString(RESET_TOKEN_LENGTH);
      const tokenHash = hashToken(token);
      await ctx.commands.handle(
        // Nothing the api reads waits on the verification table: the links are decided on their streams.
        { name: 'request-password-reset', request: requestMetadataOf(request), actorId: null, settle: 'none' },
        async (unit) => {
          const found = await accountByEmailIn(unit, email);
          if (!found) {
            request.log.info('password reset requested for an unknown email');
            return;
          }
          const account = found.state;
          const resets = streams.passwordReset(account.userId);
          const expiresAt = new Date(unit.now.getTime() + ctx.config.resetPassword.expiresInSeconds * 1000);
          // A newer link ends the one before, in the same append: only the latest mailed link resets.
          const index = await unit.load(resets, passwordResetModel);
          const earlier = index.state.latest;
          if (earlier) {
            const earlierToken = await unit.load(streams.verification(earlier.tokenHash), verificationTokenModel);
            unit.append(earlierToken.streamId, decideVerificationToken({ type: 'revoke', reason: 'superseded' }, earlierToken.state));
          }
          unit.append(resets, decidePasswordResetLink({ userId: account.userId, tokenHash, expiresAt }, index.state));
          unit.append(
            streams.verification(tokenHash),
            decideVerificationToken({ type: 'issue', purpose: 'reset-password', tokenHash, userId: account.userId, expiresAt }, initialVerificationToken()),
            { expected: 'no_stream', model: verificationTokenModel },
          );
          queueMail(unit, ctx, {
            kind: 'password-reset',
            userId: account.userId,
            to: account.email,
            name: account.name,
            token,
            callbackURL: body.redirectTo ?? null,
            expiresAt,
          });
        },
      );
    });
    return RESET_REQUEST_ANSWER;
  };

  return async function register(app: FastifyInstance): Promise<void> {
    // The spec's path, and the one today's better-auth client calls: the same operation.
    route(app, endpoints.forgetPassword, requestReset);
    route(app, endpoints.requestPasswordReset, requestReset);

    route(app, endpoints.resetPasswordCallback, async (request, reply: FastifyReply) => {
      const { token } = request.params;
      const { callbackURL } = request.query;
      checkCallbackURL(callbackURL, ctx.config.trustedOrigins);
      const target = new URL(callbackURL, authBase);
      const { state } = await readToken(ctx, hashToken(token));
      if (usableBy(state, 'reset-password', ctx.clock()) === null) target.searchParams.set('error', 'INVALID_TOKEN');
      else target.searchParams.set('token', token);
      return redirect(reply, redirectLocation(target.href, ctx.config.trustedOrigins));
    });

    route(app, endpoints.resetPassword, async (request) => {
      const { body, query } = request;
      const token = body.token || query.token;
      if (!token) throw new DomainError('INVALID_TOKEN');
      checkNewPassword(ctx.config, body.newPassword);
      const tokenHash = hashToken(token);
      const passwordHash = await hashPassword(body.newPassword);
      const revokeSessions = ctx.config.resetPassword.revokeSessions;
      await ctx.commands.handle(
        // Revocation at least of the impersonation sessions the user opened, if an admin: answered once they are over.
        { name: 'reset-password', request: requestMetadataOf(request), actorId: null, settle: 'revocation' },
        async (unit) => {
          // Consuming first: the token stream's version makes the reset happen once, even for racing requests.
          const tokenStream = await unit.load(streams.verification(tokenHash), verificationTokenModel);
          const consumed = decideVerificationToken({ type: 'consume', purpose: 'reset-password', now: unit.now }, tokenStream.state);
          const consumption = consumed[0];
          if (consumption?.type !== 'verification.token_consumed.v1') throw new DomainError('INVALID_TOKEN');
          const userId = consumption.data.userId;
          unit.actAs(userId);
          unit.append(tokenStream.streamId, consumed);
          const account = await accountIn(unit, userId);
          unit.append(account.streamId, decideAccount({ type: 'reset-password', passwordHash, newAccountId: generateId() }, account.state));
          // Whoever knew the old password could have opened impersonation sessions as this user, if an admin:
          // those end with it, whether or not the user's own sessions do.
          if (revokeSessions) await endAllSessions(unit, userId, 'password_reset');
          else await endImpersonationsOpenedBy(unit, userId, 'password_reset');
        },
      );
      return { status: true };
    });

    route(app, endpoints.changePassword, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      checkNewPassword(ctx.config, body.newPassword);
      checkPresentedPassword(ctx.config, body.currentPassword);
      const userId = current.user.id;
      const currentPassword = passwordCheck(body.currentPassword);
      // Hashed while the current password is verified: both argon2 runs at once, on two of the lanes.
      const hashing = hashPassword(body.newPassword);
      hashing.catch(() => {});

      const requestMetadata = requestMetadataOf(request);
      const { result: opened } = await ctx.commands.handle(
        { name: 'change-password', request: requestMetadata, actorId: userId, serialize: [streams.user(userId)], settle: body.revokeOtherSessions ? 'revocation' : 'write' },
        async (unit) => {
          // The current password is checked against the hash this change replaces, not one read before.
          const account = await accountIn(unit, userId);
          if (account.state.status !== 'active' || !account.state.credential) throw new DomainError('CREDENTIAL_ACCOUNT_NOT_FOUND');
          if (!(await currentPassword.matches(account.state.credential.passwordHash))) throw new DomainError('INVALID_PASSWORD');
          const passwordHash = await hashing;
          unit.append(account.streamId, decideAccount({ type: 'change-password', passwordHash }, account.state));
          if (!body.revokeOtherSessions) return null;
          // better-auth ends every session, the caller's too, and opens a new one for the caller.
          await endAllSessions(unit, userId, 'password_changed');
          const signIn = newSession(ctx, requestMetadata, unit.now, true);
          openSession(unit, userId, signIn.session, 'email-password');
          return signIn;
        },
      );
      if (opened) {
        clearDontRemember(request, reply, ctx.cookies);
        setSessionCookie(reply, ctx.cookies, opened.token, { dontRemember: false });
      }
      // better-auth answers the user of the session the change was made in, read no further.
      return { token: opened?.token ?? null, user: current.user };
    });

    route(app, endpoints.verifyPassword, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      checkPresentedPassword(ctx.config, body.password);
      const state = await readAccount(ctx, current.user.id);
      const hash = state.status === 'active' ? state.credential?.passwordHash : undefined;
      if (!hash || !(await passwordCheck(body.password).matches(hash))) throw new DomainError('INVALID_PASSWORD');
      return { status: true };
    });

    // Server only: a backend with AUTH_SERVER_API_KEY sets a first password for a user (one signed in with a
    // social provider, or imported without one). To clients, as in better-auth, the route does not exist.
    const admitServerCalls = (request: FastifyRequest): void => {
      const call = serverCall(ctx, request);
      if (call === 'absent') throw new DomainError('NOT_FOUND');
      if (call === 'refused') throw new DomainError('UNAUTHORIZED');
    };
    route(app, endpoints.setPassword, async (request, reply) => {
      const { body } = request;
      const userId = body.userId ?? (await resolveSession(ctx, request, reply, { refresh: false }))?.user.id;
      if (!userId) throw new DomainError('UNAUTHORIZED');
      checkNewPassword(ctx.config, body.newPassword);
      const before = await readAccount(ctx, userId);
      if (before.status !== 'active') throw new DomainError('USER_NOT_FOUND');
      if (before.credential) throw new DomainError('PASSWORD_ALREADY_SET');
      const passwordHash = await hashPassword(body.newPassword);
      await ctx.commands.handle({ name: 'set-password', request: requestMetadataOf(request), actorId: null, serialize: [streams.user(userId)] }, async (unit) => {
        const account = await activeAccountIn(unit, userId);
        unit.append(account.streamId, decideAccount({ type: 'set-password', passwordHash, newAccountId: generateId() }, account.state));
      });
      return { status: true };
    }, { admit: admitServerCalls });
  };
}
