import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { optionalText, providerUserId, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

/** Without ids, Kick's users endpoint answers the token's own user, as a one-element list. */
const kickUsers = z.object({
  data: z.array(z.object({ user_id: providerUserId, name: optionalText, email: optionalText, profile_picture: optionalText })).min(1),
});

export function kickProvider(settings: SocialProviderSettings): SocialProvider {
  const usersUrl = settings.userInfoUrl ?? 'https://api.kick.com/public/v1/users';
  return oauth2Provider({
    id: 'kick',
    name: 'Kick',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://id.kick.com/oauth/authorize',
      clientId: settings.clientId,
      defaultScopes: ['user:read'],
      pkce: true,
      loginHint: false,
    },
    token: { url: settings.tokenUrl ?? 'https://id.kick.com/oauth/token', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(usersUrl, tokens.accessToken);
      const users = kickUsers.safeParse(answer);
      const user = users.success ? users.data.data[0] : undefined;
      if (user === undefined) return null;
      // Kick says nothing of whether the email is verified. The profile is the answer's first user, as Kick
      // sent it (better-auth's `data` is that user too, not the `{ data: [...] }` around it).
      const sent = rawAnswer((answer as { data: readonly unknown[] }).data[0]);
      return { id: user.user_id, email: user.email, emailVerified: false, name: user.name ?? '', image: user.profile_picture, raw: sent };
    },
  });
}
