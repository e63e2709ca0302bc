import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { basicClient, oauth2Provider } from '../oauth2-provider.ts';
import { optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const twitterUser = z.object({
  data: z.object({ id: z.string().min(1), name: optionalText, username: optionalText, profile_image_url: optionalText }),
});
const twitterEmail = z.object({ data: z.object({ confirmed_email: optionalText }) });

function withFields(userUrl: string, fields: string): string {
  const url = new URL(userUrl);
  url.searchParams.set('user.fields', fields);
  return url.href;
}

export function twitterProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = settings.userInfoUrl ?? 'https://api.x.com/2/users/me';
  return oauth2Provider({
    id: 'twitter',
    name: 'Twitter',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://x.com/i/oauth2/authorize',
      clientId: settings.clientId,
      defaultScopes: ['users.read', 'tweet.read', 'offline.access', 'users.email'],
      // X's OAuth 2.0 refuses an authorization request without PKCE.
      pkce: true,
      loginHint: false,
    },
    token: { url: settings.tokenUrl ?? 'https://api.x.com/2/oauth2/token', client: basicClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const profile = await fetchWithBearer(withFields(userUrl, 'profile_image_url'), tokens.accessToken);
      const user = twitterUser.safeParse(profile);
      if (!user.success) return null;
      // Only an app granted the users.email scope gets the address, and X gives it only once confirmed.
      const answer = twitterEmail.safeParse(await fetchWithBearer(withFields(userUrl, 'confirmed_email'), tokens.accessToken).catch(() => null));
      const email = answer.success ? answer.data.data.confirmed_email : null;
      const u = user.data.data;
      // The profile answer as X sent it; the second (the email) only completes it.
      return { id: u.id, email, emailVerified: email !== null, name: u.name ?? u.username ?? '', image: u.profile_image_url, raw: rawAnswer(profile) };
    },
  });
}
