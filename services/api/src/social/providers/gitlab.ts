import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { claimedFlag, optionalText, providerUserId, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const gitlabUser = z.object({
  id: providerUserId,
  username: optionalText,
  name: optionalText,
  email: optionalText,
  avatar_url: optionalText,
  state: z.string(),
  locked: z.boolean().nullish(),
  email_verified: claimedFlag,
});

export function gitlabProvider(settings: SocialProviderSettings): SocialProvider {
  // A self-hosted GitLab serves the same paths under its own base URL.
  const base = (settings.issuer ?? 'https://gitlab.com').replace(/\/+$/, '');
  const userUrl = settings.userInfoUrl ?? `${base}/api/v4/user`;
  return oauth2Provider({
    id: 'gitlab',
    name: 'Gitlab',
    authorization: {
      endpoint: settings.authorizationUrl ?? `${base}/oauth/authorize`,
      clientId: settings.clientId,
      defaultScopes: ['read_user'],
      pkce: true,
      loginHint: true,
    },
    token: { url: settings.tokenUrl ?? `${base}/oauth/token`, client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(userUrl, tokens.accessToken);
      const user = gitlabUser.safeParse(answer);
      // A blocked or locked GitLab account does not sign in here either.
      if (!user.success || user.data.state !== 'active' || user.data.locked === true) return null;
      const u = user.data;
      return { id: u.id, email: u.email, emailVerified: u.email_verified, name: u.name ?? u.username ?? '', image: u.avatar_url, raw: rawAnswer(answer) };
    },
  });
}
