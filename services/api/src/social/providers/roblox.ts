import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const robloxUser = z.object({ sub: z.string().min(1), nickname: optionalText, preferred_username: optionalText, picture: optionalText });

export function robloxProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = settings.userInfoUrl ?? 'https://apis.roblox.com/oauth/v1/userinfo';
  return oauth2Provider({
    id: 'roblox',
    name: 'Roblox',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://apis.roblox.com/oauth/v1/authorize',
      clientId: settings.clientId,
      defaultScopes: ['openid', 'profile'],
      pkce: false,
      loginHint: false,
      extra: { prompt: 'select_account consent' },
    },
    token: { url: settings.tokenUrl ?? 'https://apis.roblox.com/oauth/v1/token', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(userUrl, tokens.accessToken);
      const user = robloxUser.safeParse(answer);
      if (!user.success) return null;
      const u = user.data;
      // Roblox has no email to give. better-auth puts the username in its place; a username is no address,
      // so there is none: `email_not_found`.
      return { id: u.sub, email: null, emailVerified: false, name: u.nickname ?? u.preferred_username ?? '', image: u.picture, raw: rawAnswer(answer) };
    },
  });
}
