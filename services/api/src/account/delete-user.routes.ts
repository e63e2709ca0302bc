import type { FastifyInstance, FastifyRequest } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError, streams } from '@portcullis/contracts';
import { hashToken, randomString, verifyPassword } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { redirect, redirectLocation } from '../http/redirect.ts';
import { eventMetadata, requestMetadataOf } from '../http/request-context.ts';
import { checkPresentedPassword } from '../identity/password-policy.ts';
import { emailReservationModel } from '../identity/email-reservation.decider.ts';
import { endAllSessions } from '../session/session-lifecycle.ts';
import { clearSessionCookies } from '../http/session-cookies.ts';
import { route } from '../http/declared-route.ts';
import { membershipRemovalWrites } from '../organization/user-deletion.ts';
import { requireSession, resolveSession } from '../session/current-session.ts';
import { usernameReleaseWrites } from '../username/username-claim.ts';
import { streamWrite } from '../write-model.ts';
import { accountModel, decideAccount, decideEmailRelease } from '../identity/account.decider.ts';
import { loadAccount, mailJobWrite } from '../identity/account-model.ts';
import { decideVerificationToken, verificationTokenModel } from './verification-token.decider.ts';

/** Spec section 9: 32 characters of lowercase letters and digits (better-auth's generateRandomString(32, '0-9', 'a-z')). */
const DELETE_TOKEN_LENGTH = 32;
const DELETE_TOKEN_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Deletes a user in one atomic append: `user.deleted.v1` on its stream (every projection drops its
 * sessions, accounts and verifications on it), its email released for a new sign-up, its memberships
 * removed from their organizations, and, when a mailed token authorised it, that token consumed (so it
 * works once).
 */
async function deleteUser(ctx: ApiContext, request: FastifyRequest, userId: string, token?: string): Promise<void> {
  await ctx.commands.handle(
    { request: requestMetadataOf(request), actorId: userId, serialize: [streams.user(userId)], settle: 'revocation' },
    async (unit) => {
      if (token !== undefined) {
        const tokenStream = await unit.load(streams.verification(hashToken(token)), verificationTokenModel);
        unit.append(tokenStream.streamId, decideVerificationToken({ type: 'consume', purpose: 'delete-account', now: unit.now, userId }, tokenStream.state));
      }
      const account = await unit.load(streams.user(userId), accountModel);
      unit.append(account.streamId, decideAccount({ type: 'delete' }, account.state));
      const email = account.state.status === 'active' ? account.state.email : '';
      const reservation = await unit.load(streams.email(email), emailReservationModel);
      unit.append(reservation.streamId, decideEmailRelease({ userId, email }, reservation.state));
      // Every session, decided on the user's session index, so none opened a moment ago outlives the user.
      await endAllSessions(unit, userId, 'user_deleted');
      const metadata = unit.metadata;
      // Its username too, so the name can be taken again; and its memberships, each on its organization's stream.
      unit.include([...(await usernameReleaseWrites(ctx, userId, metadata)), ...(await membershipRemovalWrites(ctx, userId, metadata))]);
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
      const { state } = await loadAccount(ctx, userId);
      if (state.status !== 'active') throw new DomainError('USER_NOT_FOUND');

      if (body.password) {
        checkPresentedPassword(ctx.config, body.password);
        if (!state.credential) throw new DomainError('CREDENTIAL_ACCOUNT_NOT_FOUND');
        if (!(await verifyPassword(state.credential.passwordHash, body.password))) throw new DomainError('INVALID_PASSWORD');
      }
      if (body.token) {
        await deleteUser(ctx, request, userId, body.token);
        clearSessionCookies(reply, ctx.cookies);
        return { success: true, message: 'User deleted' };
      }
      if (ctx.config.deleteUser.sendVerification) {
        const token = randomString(DELETE_TOKEN_LENGTH, DELETE_TOKEN_ALPHABET);
        const tokenHash = hashToken(token);
        const now = ctx.clock();
        const expiresAt = new Date(now.getTime() + ctx.config.deleteUser.expiresInSeconds * 1000);
        const metadata = eventMetadata(request, now, userId);
        await ctx.store.append([
          streamWrite(
            streams.verification(tokenHash),
            'no_stream',
            decideVerificationToken({ type: 'issue', purpose: 'delete-account', tokenHash, userId, expiresAt }, { status: 'none' }),
            metadata,
          ),
          mailJobWrite(
            ctx,
            { kind: 'delete-account', userId, to: state.email, name: state.name, token, callbackURL: body.callbackURL ?? null, expiresAt },
            metadata,
          ),
        ]);
        return { success: true, message: 'Verification email sent' };
      }
      // Spec section 5: the right password, or a fresh session (freshAge 0 turns the check off).
      const freshAgeMs = ctx.config.session.freshAgeSeconds * 1000;
      if (!body.password && freshAgeMs > 0 && ctx.clock().getTime() - Date.parse(current.session.createdAt) >= freshAgeMs) {
        throw new DomainError('SESSION_EXPIRED');
      }
      await deleteUser(ctx, request, userId);
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
      await deleteUser(ctx, request, current.user.id, query.token);
      clearSessionCookies(reply, ctx.cookies);
      if (location) return redirect(reply, location);
      return { success: true, message: 'User deleted' };
    });
  };
}
