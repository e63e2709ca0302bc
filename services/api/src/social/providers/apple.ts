import type { AppleProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { idTokenClaims, remoteKeys, verifyIdToken, type TokenClient } from '../oauth2.ts';
import { oauth2Provider } from '../oauth2-provider.ts';
import { claimedFlag, optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';
import { appleClientSecret } from './apple-client-secret.ts';

const appleClaims = z.object({ sub: z.string().min(1), email: optionalText, email_verified: claimedFlag, name: optionalText });

function appleClient(settings: AppleProviderSettings, issuer: string): TokenClient {
  const { clientId, clientSecret, teamId, keyId, privateKey } = settings;
  if (clientSecret !== null) return { clientId, clientSecret, authentication: 'post' };
  if (teamId === null || keyId === null || privateKey === null) {
    throw new Error('Apple needs AUTH_APPLE_CLIENT_SECRET, or AUTH_APPLE_TEAM_ID, AUTH_APPLE_KEY_ID and AUTH_APPLE_PRIVATE_KEY to sign one');
  }
  return { clientId, clientSecret: appleClientSecret({ teamId, keyId, privateKey, clientId, audience: issuer }), authentication: 'post' };
}

export function appleProvider(settings: AppleProviderSettings): SocialProvider {
  const issuer = settings.issuer ?? 'https://appleid.apple.com';
  const keys = remoteKeys(settings.jwksUrl ?? 'https://appleid.apple.com/auth/keys');
  // A native app's tokens name its bundle id as audience, the web flow's the services id.
  const audience = settings.appBundleIdentifier === null ? settings.clientId : [settings.clientId, settings.appBundleIdentifier];
  return oauth2Provider({
    id: 'apple',
    name: 'Apple',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://appleid.apple.com/auth/authorize',
      clientId: settings.clientId,
      defaultScopes: ['email', 'name'],
      pkce: true,
      loginHint: false,
      // Apple posts the callback as a form when name or email is asked for, and only then sends the name.
      responseType: 'code id_token',
      extra: { response_mode: 'form_post' },
    },
    token: { url: settings.tokenUrl ?? 'https://appleid.apple.com/auth/token', client: appleClient(settings, issuer) },
    refresh: {},
    // Apple has no user endpoint: the id token its token endpoint answered says who, and the name comes
    // once, as the `user` field of the first callback.
    async userInfo({ tokens, user }) {
      const decoded = idTokenClaims(tokens.idToken);
      const claims = appleClaims.safeParse(decoded);
      if (!claims.success) return null;
      const c = claims.data;
      const given = `${user?.name?.firstName ?? ''} ${user?.name?.lastName ?? ''}`.trim();
      // The id token's claims; the callback's `user` field is the client's word, not kept with them.
      return { id: c.sub, email: c.email, emailVerified: c.email_verified, name: given || (c.name ?? ''), image: null, raw: rawAnswer(decoded) };
    },
    verifyIdToken: ({ token, nonce }) => verifyIdToken(token, nonce, { keys, issuer, audience, maxTokenAge: '1h', nonceMayBeHashed: true }),
  });
}
