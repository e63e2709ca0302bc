import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const spotifyUser = z.object({
  id: z.string().min(1),
  display_name: optionalText,
  email: optionalText,
  images: z.array(z.object({ url: optionalText })).nullish(),
});

export function spotifyProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = settings.userInfoUrl ?? 'https://api.spotify.com/v1/me';
  return oauth2Provider({
    id: 'spotify',
    name: 'Spotify',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://accounts.spotify.com/authorize',
      clientId: settings.clientId,
      defaultScopes: ['user-read-email'],
      pkce: true,
      loginHint: false,
    },
    token: { url: settings.tokenUrl ?? 'https://accounts.spotify.com/api/token', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(userUrl, tokens.accessToken);
      const user = spotifyUser.safeParse(answer);
      if (!user.success) return null;
      const u = user.data;
      // Spotify says nothing of whether the email is verified.
      return { id: u.id, email: u.email, emailVerified: false, name: u.display_name ?? '', image: u.images?.[0]?.url ?? null, raw: rawAnswer(answer) };
    },
  });
}
