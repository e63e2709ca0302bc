import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { oauth2Provider } from '../oauth2-provider.ts';
import { optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const tiktokUser = z.object({
  data: z.object({
    user: z.object({ open_id: z.string().min(1), display_name: optionalText, username: optionalText, avatar_large_url: optionalText }),
  }),
});

export function tiktokProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = new URL(settings.userInfoUrl ?? 'https://open.tiktokapis.com/v2/user/info/');
  // TikTok answers only the fields asked for.
  userUrl.searchParams.set('fields', 'open_id,avatar_large_url,display_name,username');
  return oauth2Provider({
    id: 'tiktok',
    name: 'TikTok',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://www.tiktok.com/v2/auth/authorize',
      // TikTok calls its client id the client key, in the URL and at the token endpoint.
      clientId: settings.clientId,
      clientIdParameter: 'client_key',
      defaultScopes: ['user.info.profile'],
      scopeSeparator: ',',
      pkce: false,
      loginHint: false,
    },
    token: {
      url: settings.tokenUrl ?? 'https://open.tiktokapis.com/v2/oauth/token/',
      client: { clientId: settings.clientId, clientIdParameter: 'client_key', clientSecret: settings.clientSecret, authentication: 'post' },
    },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(userUrl.href, tokens.accessToken);
      const parsed = tiktokUser.safeParse(answer);
      if (!parsed.success) return null;
      const u = parsed.data.data.user;
      // TikTok has no email to give. better-auth puts the username in its place; a username is no address
      // (mail to it fails, and it may be someone else's address), so there is none: `email_not_found`.
      return { id: u.open_id, email: null, emailVerified: false, name: u.display_name ?? u.username ?? '', image: u.avatar_large_url, raw: rawAnswer(answer) };
    },
  });
}
