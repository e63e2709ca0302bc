import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchJson } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { optionalText, providerUserId, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const vkUser = z.object({
  user: z.object({ user_id: providerUserId, first_name: optionalText, last_name: optionalText, email: optionalText, avatar: optionalText }),
});

export function vkProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = settings.userInfoUrl ?? 'https://id.vk.com/oauth2/user_info';
  return oauth2Provider({
    id: 'vk',
    name: 'VK',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://id.vk.com/authorize',
      clientId: settings.clientId,
      defaultScopes: ['email', 'phone'],
      pkce: true,
      loginHint: false,
      deviceBound: true,
    },
    token: { url: settings.tokenUrl ?? 'https://id.vk.com/oauth2/auth', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      // VK ID takes the token in a form, with the app's id.
      const body = new URLSearchParams({ access_token: tokens.accessToken, client_id: settings.clientId });
      const answer = await fetchJson(userUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      const user = vkUser.safeParse(answer);
      // As better-auth: a VK user without an email is not described at all (`unable_to_get_user_info`).
      if (!user.success || user.data.user.email === null) return null;
      const u = user.data.user;
      const name = `${u.first_name ?? ''} ${u.last_name ?? ''}`.trim();
      return { id: u.user_id, email: u.email, emailVerified: false, name, image: u.avatar, raw: rawAnswer(answer) };
    },
  });
}
