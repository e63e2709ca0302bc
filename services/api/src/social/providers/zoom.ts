import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const zoomUser = z.object({
  id: z.string().min(1),
  display_name: optionalText,
  email: optionalText,
  pic_url: optionalText,
  // 1 when Zoom has verified the account's email.
  verified: z.union([z.number(), z.boolean()]).nullish(),
});

export function zoomProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = settings.userInfoUrl ?? 'https://api.zoom.us/v2/users/me';
  return oauth2Provider({
    id: 'zoom',
    name: 'Zoom',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://zoom.us/oauth/authorize',
      clientId: settings.clientId,
      // A Zoom app's scopes are set where it is registered; a sign-in asks for no others unless told.
      defaultScopes: [],
      pkce: true,
      loginHint: false,
    },
    token: { url: settings.tokenUrl ?? 'https://zoom.us/oauth/token', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(userUrl, tokens.accessToken);
      const user = zoomUser.safeParse(answer);
      if (!user.success) return null;
      const u = user.data;
      return { id: u.id, email: u.email, emailVerified: Boolean(u.verified), name: u.display_name ?? '', image: u.pic_url, raw: rawAnswer(answer) };
    },
  });
}
