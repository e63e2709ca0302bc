import type { SocialProviderId, SocialProviderSettings, SocialSettings } from '@portcullis/platform';
import type { SocialProvider } from '../provider.ts';
import { appleProvider } from './apple.ts';
import { discordProvider } from './discord.ts';
import { dropboxProvider } from './dropbox.ts';
import { facebookProvider } from './facebook.ts';
import { githubProvider } from './github.ts';
import { gitlabProvider } from './gitlab.ts';
import { googleProvider } from './google.ts';
import { kickProvider } from './kick.ts';
import { linkedinProvider } from './linkedin.ts';
import { microsoftProvider } from './microsoft.ts';
import { oidcProvider } from './oidc.ts';
import { redditProvider } from './reddit.ts';
import { robloxProvider } from './roblox.ts';
import { spotifyProvider } from './spotify.ts';
import { tiktokProvider } from './tiktok.ts';
import { twitchProvider } from './twitch.ts';
import { twitterProvider } from './twitter.ts';
import { vkProvider } from './vk.ts';
import { zoomProvider } from './zoom.ts';

type CommonProviderId = Exclude<SocialProviderId, 'apple' | 'microsoft'>;

const commonProviders: Record<CommonProviderId, (settings: SocialProviderSettings) => SocialProvider> = {
  discord: discordProvider,
  dropbox: dropboxProvider,
  facebook: facebookProvider,
  github: githubProvider,
  gitlab: gitlabProvider,
  google: googleProvider,
  kick: kickProvider,
  linkedin: linkedinProvider,
  reddit: redditProvider,
  roblox: robloxProvider,
  spotify: spotifyProvider,
  tiktok: tiktokProvider,
  twitch: twitchProvider,
  twitter: twitterProvider,
  vk: vkProvider,
  zoom: zoomProvider,
};

/**
 * The providers sign-in offers, by id: those configured with a client id, and the generic OIDC ones. Any
 * other id is absent, which the api answers with 'Provider not found'. Nothing is fetched until first use.
 */
export function socialProviders(settings: Pick<SocialSettings, 'providers' | 'oidc'>): ReadonlyMap<string, SocialProvider> {
  const providers = new Map<string, SocialProvider>();
  const { apple, microsoft, ...common } = settings.providers;
  if (apple) providers.set('apple', appleProvider(apple));
  if (microsoft) providers.set('microsoft', microsoftProvider(microsoft));
  for (const [id, configured] of Object.entries(common) as [CommonProviderId, SocialProviderSettings | undefined][]) {
    if (configured) providers.set(id, commonProviders[id](configured));
  }
  for (const oidc of settings.oidc) providers.set(oidc.id, oidcProvider(oidc));
  return providers;
}
