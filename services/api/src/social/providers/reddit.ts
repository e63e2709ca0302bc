import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { basicClient, oauth2Provider } from '../oauth2-provider.ts';
import { optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const redditUser = z.object({ id: z.string().min(1), name: optionalText, icon_img: optionalText });

// Reddit throttles or refuses the default User-Agents of HTTP libraries (https://github.com/reddit-archive/reddit/wiki/API).
const headers = { 'user-agent': 'portcullis' };

export function redditProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = settings.userInfoUrl ?? 'https://oauth.reddit.com/api/v1/me';
  return oauth2Provider({
    id: 'reddit',
    name: 'Reddit',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://www.reddit.com/api/v1/authorize',
      clientId: settings.clientId,
      defaultScopes: ['identity'],
      pkce: false,
      loginHint: false,
    },
    token: { url: settings.tokenUrl ?? 'https://www.reddit.com/api/v1/access_token', client: basicClient(settings), headers },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(userUrl, tokens.accessToken, headers);
      const user = redditUser.safeParse(answer);
      if (!user.success) return null;
      const u = user.data;
      return {
        id: u.id,
        // Reddit gives no email. As better-auth does: a placeholder that no one can receive mail at (RFC 2606
        // `.invalid`), unique per Reddit user and never verified, so it links to no existing user.
        email: `${u.id}@reddit.invalid`,
        emailVerified: false,
        name: u.name ?? '',
        // The icon URL carries signing query parameters that expire; the bare URL keeps working.
        image: u.icon_img?.split('?')[0] ?? null,
        raw: rawAnswer(answer),
      };
    },
  });
}
