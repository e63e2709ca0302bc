import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { idTokenClaims, remoteKeys, verifyIdToken } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { claimedFlag, optionalText, rawAnswer } from '../profile-fields.ts';
import type { SocialProvider } from '../provider.ts';

const googleClaims = z.object({ sub: z.string().min(1), email: optionalText, email_verified: claimedFlag, name: optionalText, picture: optionalText });

// https://developers.google.com/identity/sign-in/web/backend-auth#verify-the-integrity-of-the-id-token
const googleIssuers = ['https://accounts.google.com', 'accounts.google.com'];

export function googleProvider(settings: SocialProviderSettings): SocialProvider {
  const keys = remoteKeys(settings.jwksUrl ?? 'https://www.googleapis.com/oauth2/v3/certs');
  return oauth2Provider({
    id: 'google',
    name: 'Google',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://accounts.google.com/o/oauth2/v2/auth',
      clientId: settings.clientId,
      defaultScopes: ['email', 'profile', 'openid'],
      pkce: true,
      loginHint: true,
      extra: { include_granted_scopes: 'true' },
    },
    token: { url: settings.tokenUrl ?? 'https://oauth2.googleapis.com/token', client: postedClient(settings) },
    refresh: {},
    // The profile is the id token Google's token endpoint just answered.
    async userInfo({ tokens }) {
      const decoded = idTokenClaims(tokens.idToken);
      const claims = googleClaims.safeParse(decoded);
      if (!claims.success) return null;
      const c = claims.data;
      return { id: c.sub, email: c.email, emailVerified: c.email_verified, name: c.name ?? '', image: c.picture, raw: rawAnswer(decoded) };
    },
    verifyIdToken: ({ token, nonce }) =>
      verifyIdToken(token, nonce, {
        keys,
        issuer: settings.issuer ?? googleIssuers,
        audience: settings.clientId,
        algorithms: ['RS256'],
        maxTokenAge: '1h',
      }),
  });
}
