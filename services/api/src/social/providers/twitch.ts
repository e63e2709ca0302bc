import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { idTokenClaims } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { claimedFlag, optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const twitchClaims = z.object({ sub: z.string().min(1), preferred_username: optionalText, email: optionalText, email_verified: claimedFlag, picture: optionalText });

/** Twitch's id token carries only the claims asked for by name (https://dev.twitch.tv/docs/authentication/getting-tokens-oidc/#requesting-claims). */
const idTokenClaimRequest = JSON.stringify({ id_token: { email: null, email_verified: null, preferred_username: null, picture: null } });

export function twitchProvider(settings: SocialProviderSettings): SocialProvider {
  return oauth2Provider({
    id: 'twitch',
    name: 'Twitch',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://id.twitch.tv/oauth2/authorize',
      clientId: settings.clientId,
      defaultScopes: ['user:read:email', 'openid'],
      pkce: false,
      loginHint: false,
      extra: { claims: idTokenClaimRequest },
    },
    token: { url: settings.tokenUrl ?? 'https://id.twitch.tv/oauth2/token', client: postedClient(settings) },
    refresh: {},
    // The id token Twitch's token endpoint answered (the openid scope) says who.
    async userInfo({ tokens }) {
      const decoded = idTokenClaims(tokens.idToken);
      const claims = twitchClaims.safeParse(decoded);
      if (!claims.success) return null;
      const c = claims.data;
      return { id: c.sub, email: c.email, emailVerified: c.email_verified, name: c.preferred_username ?? '', image: c.picture, raw: rawAnswer(decoded) };
    },
  });
}
