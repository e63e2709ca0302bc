import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError, streams } from '@portcullis/contracts';
import { hashToken, loadStream } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { checkNewPassword, checkPresentedPassword, passwordCheck } from '../identity/password-policy.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { withMinimumDuration } from '../http/equal-timing.ts';
import { redirect, redirectLocation } from '../http/redirect.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { serverCall } from '../http/server-call.ts';
import { setOpenedSessionCookies } from '../http/session-cookies.ts';
import { route, type DeclaredRequest } from '../http/declared-route.ts';
import { requireSession, resolveSession } from '../session/current-session.ts';
import { readAccount } from '../identity/account-model.ts';
import { credentialOf } from '../identity/account.decider.ts';
import { changePassword } from './change-password.command.ts';
import { requestPasswordReset } from './request-password-reset.command.ts';
import { resetPassword } from './reset-password.command.ts';
import { setPassword } from './set-password.command.ts';
import { usableBy, verificationTokenModel } from './verification-token.decider.ts';

/**
 * Both answers (known and unknown address) take at least this long, so timing does not tell which emails
 * have accounts; it is well above what the known path's lookups, append and sealing cost.
 */
const RESET_REQUEST_FLOOR_MS = 400;
const RESET_REQUEST_ANSWER = {
  status: true,
  message: 'If this email exists in our system, check your email for the reset link',
} as const;

function readToken(ctx: AccountPorts, tokenHash: string) {
  return loadStream(ctx.store, streams.verification(tokenHash), verificationTokenModel);
}

export function passwordRoutes(ctx: AccountPorts) {
  /** Where better-auth resolves a reset callbackURL: against its base URL (base path included). */
  const authBase = `${ctx.config.baseUrl}${ctx.config.basePath}`;

  const requestReset = async (request: DeclaredRequest<typeof endpoints.requestPasswordReset | typeof endpoints.forgetPassword>) => {
    if (!ctx.config.resetPassword.enabled) throw new DomainError('RESET_PASSWORD_DISABLED');
    const { body } = request;
    checkCallbackURL(body.redirectTo, ctx.config.trustedOrigins, 'INVALID_REDIRECT_URL');
    await withMinimumDuration(RESET_REQUEST_FLOOR_MS, () =>
      requestPasswordReset(ctx, requestMetadataOf(request), { email: body.email.toLowerCase(), redirectTo: body.redirectTo }),
    );
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
      await resetPassword(ctx, requestMetadataOf(request), { token, newPassword: body.newPassword });
      return { status: true };
    });

    route(app, endpoints.changePassword, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      checkNewPassword(ctx.config, body.newPassword);
      checkPresentedPassword(ctx.config, body.currentPassword);
      const opened = await changePassword(ctx, requestMetadataOf(request), {
        userId: current.user.id,
        currentPassword: body.currentPassword,
        newPassword: body.newPassword,
        revokeOtherSessions: body.revokeOtherSessions === true,
      });
      if (opened) {
        setOpenedSessionCookies(request, reply, ctx.cookies, opened.token, true);
      }
      // better-auth answers the user of the session the change was made in, read no further.
      return { token: opened?.token ?? null, user: current.user };
    });

    route(app, endpoints.verifyPassword, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      checkPresentedPassword(ctx.config, body.password);
      const state = await readAccount(ctx, current.user.id);
      const hash = state.status === 'active' ? credentialOf(state)?.passwordHash : undefined;
      if (!hash || !(await passwordCheck(body.password, ctx.config.password.argon2).matches(hash))) throw new DomainError('INVALID_PASSWORD');
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
      await setPassword(ctx, requestMetadataOf(request), { userId, newPassword: body.newPassword });
      return { status: true };
    }, { admit: admitServerCalls });
  };
}
