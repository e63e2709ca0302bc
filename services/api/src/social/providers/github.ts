import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { optionalText, providerUserId, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const githubUser = z.object({ id: providerUserId, login: z.string(), name: optionalText, email: optionalText, avatar_url: optionalText });
const githubEmails = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

// GitHub refuses API requests without a User-Agent.
const apiHeaders = { 'user-agent': 'portcullis', accept: 'application/vnd.github+json' };

export function githubProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = settings.userInfoUrl ?? 'https://api.github.com/user';
  return oauth2Provider({
    id: 'github',
    name: 'GitHub',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://github.com/login/oauth/authorize',
      clientId: settings.clientId,
      defaultScopes: ['read:user', 'user:email'],
      pkce: true,
      loginHint: true,
    },
    token: { url: settings.tokenUrl ?? 'https://github.com/login/oauth/access_token', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(userUrl, tokens.accessToken, apiHeaders);
      const user = githubUser.safeParse(answer);
      if (!user.success) return null;
      // The profile shows an email only when its owner made one public, and never says whether it is
      // verified; the email list (the user:email scope) says both. Without that list the profile's stands, unverified.
      const listed = githubEmails.safeParse(await fetchWithBearer(`${userUrl}/emails`, tokens.accessToken, apiHeaders).catch(() => null));
      const emails = listed.success ? listed.data : [];
      const email = user.data.email ?? (emails.find((e) => e.primary) ?? emails[0])?.email ?? null;
      return {
        id: user.data.id,
        email,
        emailVerified: emails.find((e) => e.email === email)?.verified ?? false,
        name: user.data.name ?? user.data.login,
        image: user.data.avatar_url,
        // The /user answer as GitHub sent it; the email list only completes its email.
        raw: rawAnswer(answer),
      };
    },
  });
}
