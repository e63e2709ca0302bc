import type { FastifyInstance, FastifyReply } from 'fastify';
import { callbackFieldsSchema, errorCatalogue, providerUserSchema, socialEndpoints as endpoints, type ProviderUser } from '@portcullis/contracts';
import type { SocialPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { redirect, redirectLocation } from '../http/redirect.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { clearStateCookie, setOpenedSessionCookies, stateCookie } from '../http/session-cookies.ts';
import { linkProviderAccount } from './link-provider-account.command.ts';
import { providerAccountOf } from './provider-answers.ts';
import type { ProviderProfile, ProviderTokens } from './provider.ts';
import { signInWithProvider, signUpRefused } from './sign-in-with-provider.command.ts';
import { useFlow } from './social-flow.ts';

/** Apple's first-sign-in `user` field, JSON text: what of it is readable, else nothing. */
function appleUser(text: string | undefined): ProviderUser | null {
  if (!text) return null;
  try {
    const parsed = providerUserSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * GET|POST /callback/:id, better-auth's order of checks: every failure is a redirect with `error=<code>` to
 * the flow's error URL (or /error before a flow is known), never a JSON answer, since a browser is there.
 */
export function callbackRoutes(ctx: SocialPorts) {
  const authBase = `${ctx.config.baseUrl}${ctx.config.basePath}`;
  const defaultErrorURL = `${authBase}/error`;
  const trusted = ctx.config.trustedOrigins;

  const redirectWithError = (reply: FastifyReply, errorURL: string, error: string, description?: string): FastifyReply => {
    const params: Record<string, string> = { error };
    if (description) params.error_description = description;
    // The flow's URL passed the trusted-origin check when the flow began; checked again as it is sent.
    return redirect(reply, redirectLocation(errorURL, trusted, { params }));
  };

  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.callback, async (request, reply) => {
      const providerId = request.params.id;
      if (request.method === 'POST') {
        // A form_post (Apple) is turned into a GET of this route, so the browser sends its SameSite=Lax cookies.
        const merged = new URLSearchParams();
        for (const [key, value] of Object.entries({ ...(request.body ?? {}), ...request.query })) {
          if (typeof value === 'string') merged.set(key, value);
        }
        return redirect(reply, redirectLocation(`${authBase}/callback/${encodeURIComponent(providerId)}?${merged}`, trusted));
      }
      const parsed = callbackFieldsSchema.safeParse(request.query);
      if (!parsed.success) return redirectWithError(reply, defaultErrorURL, 'invalid_callback_request');
      const fields = parsed.data;
      if (!fields.state) return redirectWithError(reply, defaultErrorURL, 'state_not_found');

      // The state must be the one this browser was given (its signed cookie), then a flow under way.
      const cookie = stateCookie(request, ctx.cookies);
      clearStateCookie(reply, ctx.cookies);
      if (!cookie.present) return redirectWithError(reply, defaultErrorURL, 'state_mismatch');
      if (cookie.state === null) return redirectWithError(reply, defaultErrorURL, 'please_restart_the_process');
      const metadata = requestMetadataOf(request);
      const flow = cookie.state === fields.state && cookie.secret !== null ? await useFlow(ctx, metadata, fields.state, cookie.secret) : null;
      if (cookie.state !== fields.state) return redirectWithError(reply, defaultErrorURL, 'state_mismatch');
      if (!flow) return redirectWithError(reply, defaultErrorURL, 'please_restart_the_process');
      const errorURL = flow.errorURL ?? defaultErrorURL;

      if (fields.error) return redirectWithError(reply, errorURL, fields.error, fields.error_description);
      if (!fields.code) return redirectWithError(reply, errorURL, 'no_code');
      const provider = ctx.socialProviders.get(providerId);
      if (!provider) return redirectWithError(reply, errorURL, 'oauth_provider_not_found');
      // A flow begun with one provider is finished by that one only (better-auth does not check this).
      if (flow.providerId !== provider.id) return redirectWithError(reply, errorURL, 'please_restart_the_process');
      // RFC 9207: a provider that names itself must be the one the flow went to (a discovered issuer read first).
      if (fields.iss) await provider.ready?.().catch(() => {});
      if (fields.iss && provider.issuer && fields.iss !== provider.issuer) return redirectWithError(reply, errorURL, 'issuer_mismatch');

      let tokens: ProviderTokens;
      try {
        tokens = await provider.exchangeCode({ code: fields.code, codeVerifier: flow.codeVerifier, redirectURI: `${authBase}/callback/${provider.id}`, deviceId: fields.device_id });
      } catch (error) {
        request.log.warn({ err: error, providerId }, 'the provider refused the authorization code');
        return redirectWithError(reply, errorURL, 'invalid_code');
      }
      let profile: ProviderProfile | null;
      try {
        profile = await provider.userInfo({ tokens, user: appleUser(fields.user), expectedNonce: provider.usesNonce ? flow.nonce : undefined });
      } catch (error) {
        request.log.warn({ err: error, providerId }, 'the provider did not describe the user');
        profile = null;
      }
      if (!profile) return redirectWithError(reply, errorURL, 'unable_to_get_user_info');
      const account = providerAccountOf(provider, profile, tokens);

      if (flow.linkUserId !== null) {
        const refusal = await linkProviderAccount(ctx, metadata, { userId: flow.linkUserId, email: flow.linkEmail ?? '', profile, account });
        if (refusal) return redirectWithError(reply, errorURL, refusal);
        return redirect(reply, redirectLocation(flow.callbackURL, trusted));
      }

      if (!profile.email) return redirectWithError(reply, errorURL, 'email_not_found');
      const outcome = await signInWithProvider(ctx, metadata, {
        method: 'social',
        profile: { ...profile, email: profile.email },
        account,
        disableSignUp: signUpRefused(ctx.config, provider.id, flow.requestSignUp),
        callbackURL: flow.callbackURL,
      });
      if (!outcome.signedIn) {
        // The admin plugin's redirect for a banned user carries its message too.
        const description = outcome.refusal === 'banned' ? errorCatalogue.BANNED_USER.message : undefined;
        return redirectWithError(reply, errorURL, outcome.refusal, description);
      }
      setOpenedSessionCookies(request, reply, ctx.cookies, outcome.token, true);
      const target = outcome.isRegister && flow.newUserURL ? flow.newUserURL : flow.callbackURL;
      return redirect(reply, redirectLocation(target, trusted));
    });
  };
}
