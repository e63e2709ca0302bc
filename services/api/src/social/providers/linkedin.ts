import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { claimedFlag, optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const linkedinUser = z.object({ sub: z.string().min(1), name: optionalText, email: optionalText, email_verified: claimedFlag, picture: optionalText });

export function linkedinProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = settings.userInfoUrl ?? 'https://api.linkedin.com/v2/userinfo';
  return oauth2Provider({
    id: 'linkedin',
    name: 'Linkedin',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://www.linkedin.com/oauth/v2/authorization',
      clientId: settings.clientId,
      defaultScopes: ['profile', 'email', 'openid'],
      pkce: false,
      loginHint: true,
    },
    token: { url: settings.tokenUrl ?? 'https://www.linkedin.com/oauth/v2/accessToken', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(userUrl, tokens.accessToken);
      const user = linkedinUser.safeParse(answer);
      if (!user.success) return null;
      const u = user.data;
      return { id: u.sub, email: u.email, emailVerified: u.email_verified, name: u.name ?? '', image: u.picture, raw: rawAnswer(answer) };
    },
  });
}
