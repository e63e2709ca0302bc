import type { FastifyInstance, FastifyRequest } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError, streams } from '@portcullis/contracts';
import { hashToken, randomString } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { redirect, redirectLocation } from '../http/redirect.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { activeAccountIn } from '../identity/account-model.ts';
import { checkPresentedPassword, passwordCheck } from '../identity/password-policy.ts';
import { deleteUserIn } from '../identity/user-deletion.ts';
import { queueMail } from '../mail/mail-jobs.ts';
import { clearSessionCookies } from '../http/session-cookies.ts';
import { route } from '../http/declared-route.ts';
import { requireSession, resolveSession, sessionIsFresh } from '../session/current-session.ts';
import { decideVerificationToken, verificationTokenModel } from './verification-token.decider.ts';

/** Spec section 9: 32 characters of lowercase letters and digits (better-auth's generateRandomString(32, '0-9', 'a-z')). */
const DELETE_TOKEN_LENGTH = 32;
const DELETE_TOKEN_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Deletes a user (see `deleteUserIn`) and, when a mailed token authorised it, consumes that token (so it works once). */
async function deleteUser(ctx: ApiContext, request: FastifyRequest, userId: string, authority: { token?: string; password?: string }): Promise<void> {
  const password = authority.password === undefined ? null : passwordCheck(authority.password);
  await ctx.commands.handle(
    { name: 'delete-user', request: requestMetadataOf(request), actorId: userId, serialize: [streams.user(userId)], settle: 'revocation' },
    async (unit) => {
      if (authority.token !== undefined) {
        const tokenStream = await unit.load(streams.verification(hashToken(authority.token)), verificationTokenModel);
        unit.append(tokenStream.streamId, decideVerificationToken({ type: 'consume', purpose: 'delete-account', now: unit.now, userId }, tokenStream.state));
      }
      const account = await activeAccountIn(unit, userId);
      if (password) {
        if (!account.state.credential) throw new DomainError('CREDENTIAL_ACCOUNT_NOT_FOUND');
        if (!(await password.matches(account.state.credential.passwordHash))) throw new DomainError('INVALID_PASSWORD');
      }
      await deleteUserIn(unit, ctx, account);
    },
  );
}

export function deleteUserRoutes(ctx: ApiContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.deleteUser, async (request, reply) => {
      // Off by default, as in better-auth, which then answers as if the route did not exist.
      if (!ctx.config.deleteUser.enabled) throw new DomainError('NOT_FOUND');
      const current = await requireSession(ctx, request, reply);
      const { body } = request;
      checkCallbackURL(body.callbackURL, ctx.config.trustedOrigins);
      const userId = current.user.id;
      if (body.password) checkPresentedPassword(ctx.config, body.password);
      const password = body.password ? { password: body.password } : {};
      if (body.token) {
        await deleteUser(ctx, request, userId, { token: body.token, ...password });
        clearSessionCookies(reply, ctx.cookies);
        return { success: true, message: 'User deleted' };
      }
      if (ctx.config.deleteUser.sendVerification) {
        const token = randomString(DELETE_TOKEN_LENGTH, DELETE_TOKEN_ALPHABET);
        const tokenHash = hashToken(token);
        const check = body.password ? passwordCheck(body.password) : null;
        await ctx.commands.handle({ name: 'delete-user.mail', request: requestMetadataOf(request), actorId: userId }, async (unit) => {
          const account = await activeAccountIn(unit, userId);
          if (check) {
            if (!account.state.credential) throw new DomainError('CREDENTIAL_ACCOUNT_NOT_FOUND');
            if (!(await check.matches(account.state.credential.passwordHash))) throw new DomainError('INVALID_PASSWORD');
          }
          const expiresAt = new Date(unit.now.getTime() + ctx.config.deleteUser.expiresInSeconds * 1000);
          unit.append(
            streams.verification(tokenHash),
            decideVerificationToken({ type: 'issue', purpose: 'delete-account', tokenHash, userId, expiresAt }, { status: 'none' }),
            { expected: 'no_stream' },
          );
          const { email, name } = account.state;
          queueMail(unit, ctx, { kind: 'delete-account', userId, to: email, name, token, callbackURL: body.callbackURL ?? null, expiresAt });
        });
        return { success: true, message: 'Verification email sent' };
      }
      // Spec section 5: the right password, or a fresh session; better-auth refuses a stale one as expired.
      if (!body.password && !sessionIsFresh(ctx, current)) throw new DomainError('SESSION_EXPIRED');
      await deleteUser(ctx, request, userId, password);
      clearSessionCookies(reply, ctx.cookies);
      return { success: true, message: 'User deleted' };
    });

    route(app, endpoints.deleteUserCallback, async (request, reply) => {
      if (!ctx.config.deleteUser.enabled) throw new DomainError('NOT_FOUND');
      const { query } = request;
      checkCallbackURL(query.callbackURL, ctx.config.trustedOrigins);
      // Decided before the user is deleted: a refusal after it would leave a deletion no client was told of.
      const location = query.callbackURL ? redirectLocation(query.callbackURL, ctx.config.trustedOrigins) : null;
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      if (!current) throw new DomainError('FAILED_TO_GET_USER_INFO');
      await deleteUser(ctx, request, current.user.id, { token: query.token });
      clearSessionCookies(reply, ctx.cookies);
      if (location) return redirect(reply, location);
      return { success: true, message: 'User deleted' };
    });
  };
}
