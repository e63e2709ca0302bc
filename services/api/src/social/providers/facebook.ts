import type { SocialProviderSettings } from '@portcullis/platform';
import { z } from 'zod';
import { fetchJson, fetchWithBearer, idTokenClaims, remoteKeys, verifyIdToken } from '../oauth2.ts';
import { oauth2Provider, postedClient } from '../oauth2-provider.ts';
import { claimedFlag, optionalText, providerUserId, rawAnswer } from '../profile-fields.ts';
import type { ProviderProfile, SocialProvider } from '../provider.ts';

const limitedLoginClaims = z.object({ sub: z.string().min(1), email: optionalText, name: optionalText, picture: optionalText });
const graphProfile = z.object({
  id: providerUserId,
  name: optionalText,
  email: optionalText,
  email_verified: claimedFlag,
  picture: z.object({ data: z.object({ url: optionalText }) }).nullish(),
});
const debugToken = z.object({
  data: z.object({ is_valid: z.boolean().optional(), app_id: optionalText, user_id: optionalText }),
});

const isJwt = (token: string) => token.split('.').length === 3;

export function facebookProvider(settings: SocialProviderSettings): SocialProvider {
  const graphMe = settings.userInfoUrl ?? 'https://graph.facebook.com/me';
  const keys = remoteKeys(settings.jwksUrl ?? 'https://limited.facebook.com/.well-known/oauth/openid/jwks/');
  const issuer = settings.issuer ?? 'https://www.facebook.com';

  /**
   * A Graph access token is opaque and not bound to an app: one issued to any other app would read the
   * same /me. Facebook's debug_token (asked with our app's token) says whose user, for which app.
   */
  async function userOfAccessToken(accessToken: string): Promise<string | null> {
    if (settings.clientSecret === null) return null;
    const url = new URL('/debug_token', graphMe);
    url.searchParams.set('input_token', accessToken);
    url.searchParams.set('access_token', `${settings.clientId}|${settings.clientSecret}`);
    const answer = debugToken.safeParse(await fetchJson(url.href));
    if (!answer.success) return null;
    const { is_valid, app_id, user_id } = answer.data.data;
    return is_valid === true && app_id === settings.clientId ? user_id : null;
  }

  async function graphUser(accessToken: string): Promise<ProviderProfile | null> {
    const userId = await userOfAccessToken(accessToken);
    if (userId === null) return null;
    const url = new URL(graphMe);
    url.searchParams.set('fields', 'id,name,email,picture');
    const answer = await fetchWithBearer(url.href, accessToken);
    const profile = graphProfile.safeParse(answer);
    if (!profile.success || profile.data.id !== userId) return null;
    const p = profile.data;
    return { id: p.id, email: p.email, emailVerified: p.email_verified, name: p.name ?? '', image: p.picture?.data.url ?? null, raw: rawAnswer(answer) };
  }

  return oauth2Provider({
    id: 'facebook',
    name: 'Facebook',
    authorization: {
      endpoint: settings.authorizationUrl ?? 'https://www.facebook.com/v24.0/dialog/oauth',
      clientId: settings.clientId,
      defaultScopes: ['email', 'public_profile'],
      pkce: false,
      loginHint: true,
    },
    token: { url: settings.tokenUrl ?? 'https://graph.facebook.com/v24.0/oauth/access_token', client: postedClient(settings) },
    refresh: {},
    async userInfo({ tokens }) {
      // Limited Login (iOS) gives a JWT, already verified by verifyIdToken; it asserts no email verification.
      if (tokens.idToken !== null && isJwt(tokens.idToken)) {
        const decoded = idTokenClaims(tokens.idToken);
        const claims = limitedLoginClaims.safeParse(decoded);
        if (!claims.success) return null;
        const c = claims.data;
        return { id: c.sub, email: c.email, emailVerified: false, name: c.name ?? '', image: c.picture, raw: rawAnswer(decoded) };
      }
      // Classic login hands the client an access token, which better-auth clients send as the id token.
      const accessToken = tokens.accessToken ?? tokens.idToken;
      return accessToken === null ? null : graphUser(accessToken);
    },
    async verifyIdToken({ token, nonce }) {
      if (isJwt(token)) return verifyIdToken(token, nonce, { keys, issuer, audience: settings.clientId, algorithms: ['RS256'] });
      try {
        return (await userOfAccessToken(token)) !== null;
      } catch {
        return false;
      }
    },
  });
}
