import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, socialEndpoints as endpoints } from '@portcullis/contracts';
import type { SocialPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { serverCall } from '../http/server-call.ts';
import { setOpenedSessionCookies, setStateCookie } from '../http/session-cookies.ts';
import { resolveSession, requireSession } from '../session/current-session.ts';
import { callbackRoutes } from './callback.routes.ts';
import { scopesOf } from '../identity/provider-accounts.ts';
import { linkProviderAccount } from './link-provider-account.command.ts';
import { currentTokens, refreshProviderTokens, selectedTokens } from './provider-tokens.command.ts';
import { providerAccountOf, verifiedIdTokenProfile } from './provider-answers.ts';
import { refusalErrors, signInWithProvider, signUpRefused } from './sign-in-with-provider.command.ts';
import { startFlow } from './social-flow.ts';
import type { SocialProvider } from './provider.ts';

/** better-auth's social routes: sign-in (a redirect flow or an id token), link, the provider's tokens. */
export function socialRoutes(ctx: SocialPorts) {
  const authBase = `${ctx.config.baseUrl}${ctx.config.basePath}`;
  const providerNamed = (id: string): SocialProvider => {
    const provider = ctx.socialProviders.get(id);
    if (!provider) throw new DomainError('PROVIDER_NOT_FOUND');
    return provider;
  };

  /** The authorization URL of a new flow, its state bound to this browser by the signed state cookie. */
  const beginFlow = async (
    request: FastifyRequest,
    reply: FastifyReply,
    provider: SocialProvider,
    flow: { callbackURL: string; errorURL: string | null; newUserURL: string | null; requestSignUp: boolean; linkUserId: string | null; linkEmail: string | null },
    options: { scopes: readonly string[]; loginHint: string | undefined },
  ): Promise<string> => {
    const started = await startFlow(ctx, requestMetadataOf(request), { providerId: provider.id, ...flow });
    const url = await provider.authorizationURL({
      state: started.state,
      codeVerifier: started.codeVerifier,
      redirectURI: `${authBase}/callback/${provider.id}`,
      scopes: options.scopes,
      loginHint: options.loginHint,
      nonce: provider.usesNonce ? started.nonce : undefined,
    });
    setStateCookie(reply, ctx.cookies, started.state);
    return url.href;
  };

  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.signInSocial, async (request, reply) => {
      const { body } = request;
      const provider = providerNamed(body.provider);
      if (body.idToken) {
        const { profile, tokens } = await verifiedIdTokenProfile(provider, body.idToken);
        const outcome = await signInWithProvider(ctx, requestMetadataOf(request), {
          method: 'id-token',
          profile,
          account: providerAccountOf(provider, profile, tokens),
          disableSignUp: signUpRefused(ctx.config, provider.id, body.requestSignUp === true),
          callbackURL: body.callbackURL,
        });
        if (!outcome.signedIn) throw new DomainError(refusalErrors[outcome.refusal]);
        setOpenedSessionCookies(request, reply, ctx.cookies, outcome.token, true);
        return { redirect: false, token: outcome.token, user: outcome.user };
      }
      // better-auth: a flow without a callback URL comes back to the base URL.
      const callbackURL = body.callbackURL || ctx.config.baseUrl;
      const url = await beginFlow(
        request,
        reply,
        provider,
        {
          callbackURL,
          errorURL: body.errorCallbackURL ?? null,
          newUserURL: body.newUserCallbackURL ?? null,
          requestSignUp: body.requestSignUp ?? false,
          linkUserId: null,
          linkEmail: null,
        },
        { scopes: body.scopes ?? [], loginHint: body.loginHint },
      );
      if (!body.disableRedirect) reply.header('location', url);
      return { url, redirect: !body.disableRedirect };
    });

    route(app, endpoints.linkSocial, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const provider = providerNamed(body.provider);
      if (body.idToken) {
        const { profile, tokens } = await verifiedIdTokenProfile(provider, body.idToken);
        const refusal = await linkProviderAccount(ctx, requestMetadataOf(request), {
          userId: current.user.id,
          email: current.user.email,
          profile,
          account: providerAccountOf(provider, profile, tokens),
        });
        if (refusal) throw new DomainError(refusalErrors[refusal]);
        return { url: '', redirect: false, status: true };
      }
      const url = await beginFlow(
        request,
        reply,
        provider,
        {
          callbackURL: body.callbackURL || ctx.config.baseUrl,
          errorURL: body.errorCallbackURL ?? null,
          newUserURL: null,
          requestSignUp: false,
          linkUserId: current.user.id,
          linkEmail: current.user.email,
        },
        { scopes: body.scopes ?? [], loginHint: undefined },
      );
      if (!body.disableRedirect) reply.header('location', url);
      return { url, redirect: !body.disableRedirect };
    });

    /** The user a token route acts for: the caller's session, or the body's `userId` on a server call. */
    const tokenUser = async (request: FastifyRequest, reply: FastifyReply, bodyUserId: string | undefined): Promise<string> => {
      const call = serverCall(ctx, request);
      if (call === 'refused') throw new DomainError('UNAUTHORIZED');
      if (call === 'accepted') {
        if (!bodyUserId) throw new DomainError('USER_ID_OR_SESSION_REQUIRED');
        return bodyUserId;
      }
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      if (!current) throw new DomainError('UNAUTHORIZED');
      return current.user.id;
    };

    route(app, endpoints.getAccessToken, async (request, reply) => {
      const userId = await tokenUser(request, reply, request.body.userId);
      const selected = await selectedTokens(ctx, userId, request.body);
      const tokens = await currentTokens(ctx, requestMetadataOf(request), userId, selected).catch((error: unknown) => {
        throw new DomainError('FAILED_TO_GET_ACCESS_TOKEN', { cause: error });
      });
      return {
        ...(tokens.accessToken ? { accessToken: tokens.accessToken } : {}),
        ...(tokens.accessTokenExpiresAt ? { accessTokenExpiresAt: tokens.accessTokenExpiresAt } : {}),
        scopes: scopesOf(tokens.scope),
        ...(tokens.idToken ? { idToken: tokens.idToken } : {}),
      };
    });

    route(app, endpoints.refreshToken, async (request, reply) => {
      const userId = await tokenUser(request, reply, request.body.userId);
      const selected = await selectedTokens(ctx, userId, request.body);
      const tokens = await refreshProviderTokens(ctx, requestMetadataOf(request), userId, selected);
      return {
        ...(tokens.accessToken ? { accessToken: tokens.accessToken } : {}),
        ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
        ...(tokens.accessTokenExpiresAt ? { accessTokenExpiresAt: tokens.accessTokenExpiresAt } : {}),
        ...(tokens.refreshTokenExpiresAt ? { refreshTokenExpiresAt: tokens.refreshTokenExpiresAt } : {}),
        scope: tokens.scope,
        ...(tokens.idToken ? { idToken: tokens.idToken } : {}),
        providerId: tokens.providerId,
        accountId: selected.accountId,
      };
    });

    route(app, endpoints.accountInfo, async (request, reply) => {
      const userId = await tokenUser(request, reply, request.query.userId);
      // Without an id, the caller's first provider account.
      const selected = await selectedTokens(ctx, userId, { accountId: request.query.accountId });
      const tokens = await currentTokens(ctx, requestMetadataOf(request), userId, selected);
      const profile = await selected.provider.userInfo({
        tokens: { tokenType: 'Bearer', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, idToken: tokens.idToken, accessTokenExpiresAt: null, refreshTokenExpiresAt: null, scopes: scopesOf(tokens.scope) },
        user: null,
        expectedNonce: undefined,
      });
      if (!profile) throw new DomainError('FAILED_TO_GET_USER_INFO');
      return {
        user: { id: profile.id, name: profile.name, email: profile.email, image: profile.image, emailVerified: profile.emailVerified },
        // The provider's own answer the profile was read from (better-auth's `data`).
        data: profile.raw,
        account: { id: selected.accountId, providerId: tokens.providerId, issuer: selected.provider.issuer, accountId: tokens.providerAccountId },
      };
    });

    await app.register(callbackRoutes(ctx));
  };
}
