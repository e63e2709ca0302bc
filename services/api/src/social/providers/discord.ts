import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchWithBearer } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { claimedFlag, optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const discordUser = z.object({
  id: z.string().regex(/^\d+$/),
  username: optionalText,
  global_name: optionalText,
  discriminator: z.string().default('0'),
  avatar: optionalText,
  email: optionalText,
  verified: claimedFlag,
});

/** The user's avatar, or the default one Discord shows for them (https://discord.com/developers/docs/reference#image-formatting). */
function avatarOf(user: z.infer<typeof discordUser>): string {
  if (user.avatar !== null) {
    const animated = user.avatar.startsWith('a_');
    return `https://cdn.discordapp.com/avatars/${user.id}/${user.avatar}.${animated ? 'gif' : 'png'}`;
  }
  // Users on the new username system (discriminator 0) get one of six by their id's timestamp bits.
  const index = user.discriminator === '0' ? Number((BigInt(user.id) >> 22n) % 6n) : Number.parseInt(user.discriminator, 10) % 5;
  return `https://cdn.discordapp.com/embed/avatars/${index}.png`;
}

export function discordProvider(settings: SocialProviderSettings): SocialProvider {
  const userUrl = settings.userInfoUrl ?? 'https://discord.com/api/users/@me';
  return oauth2Provider({
    id: 'discord',
    name: 'Discord',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://discord.com/api/oauth2/authorize',
      clientId: settings.clientId,
      defaultScopes: ['identify', 'email'],
      pkce: false,
      loginHint: false,
      // Skips the consent screen for a user who already authorized the app.
      extra: { prompt: 'none' },
    },
    token: { url: settings.tokenUrl ?? 'https://discord.com/api/oauth2/token', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      if (tokens.accessToken === null) return null;
      const answer = await fetchWithBearer(userUrl, tokens.accessToken);
      const user = discordUser.safeParse(answer);
      if (!user.success) return null;
      const u = user.data;
      return { id: u.id, email: u.email, emailVerified: u.verified, name: u.global_name ?? u.username ?? '', image: avatarOf(u), raw: rawAnswer(answer) };
    },
  });
}
