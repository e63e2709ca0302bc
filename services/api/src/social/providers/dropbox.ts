import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchJson } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { claimedFlag, optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const dropboxAccount = z.object({
  account_id: z.string().min(1),
  name: z.object({ display_name: optionalText }).nullish(),
  email: optionalText,
  email_verified: claimedFlag,
  profile_photo_url: optionalText,
});

export function dropboxProvider(settings: SocialProviderSettings): SocialProvider {
  const accountUrl = settings.userInfoUrl ?? 'https://api.dropboxapi.com/2/users/get_current_account';
  return oauth2Provider({
    id: 'dropbox',
    name: 'Dropbox',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://www.dropbox.com/oauth2/authorize',
      clientId: settings.clientId,
      defaultScopes: ['account_info.read'],
      pkce: true,
      loginHint: false,
    },
    token: { url: settings.tokenUrl ?? 'https://api.dropboxapi.com/oauth2/token', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      // An RPC endpoint without arguments: a POST with no body.
      const answer = await fetchJson(accountUrl, { method: 'POST', headers: { authorization: `Bearer ${tokens.accessToken}` } });
      const account = dropboxAccount.safeParse(answer);
      if (!account.success) return null;
      const a = account.data;
      return { id: a.account_id, email: a.email, emailVerified: a.email_verified, name: a.name?.display_name ?? '', image: a.profile_photo_url, raw: rawAnswer(answer) };
    },
  });
}
