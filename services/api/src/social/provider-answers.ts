import { DomainError, type PresentedIdToken } from '@portcullis/contracts';
import type { NewProviderAccount } from '../identity/provider-accounts.ts';
import type { ProviderProfile, ProviderTokens, SocialProvider } from './provider.ts';

/** What a provider's answers become on the account: the tokens as the log keeps them, the scopes comma-separated. */
export function providerAccountOf(provider: SocialProvider, profile: ProviderProfile, tokens: ProviderTokens): NewProviderAccount {
  return {
    providerId: provider.id,
    providerAccountId: profile.id,
    scope: tokens.scopes.length > 0 ? tokens.scopes.join(',') : null,
    tokens: {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      idToken: tokens.idToken,
      accessTokenExpiresAt: tokens.accessTokenExpiresAt?.toISOString() ?? null,
      refreshTokenExpiresAt: tokens.refreshTokenExpiresAt?.toISOString() ?? null,
    },
  };
}


/**
 * An id token a client got from the provider itself (Google One Tap, Sign in with Apple on a device): checked
 * against the provider's keys, audience, issuer, expiry and nonce before anything it says is believed.
 */
export async function verifiedIdTokenProfile(
  provider: SocialProvider,
  idToken: PresentedIdToken,
): Promise<{ profile: ProviderProfile & { email: string }; tokens: ProviderTokens }> {
  if (!provider.verifyIdToken) throw new DomainError('ID_TOKEN_NOT_SUPPORTED');
  if (!(await provider.verifyIdToken({ token: idToken.token, nonce: idToken.nonce }))) throw new DomainError('INVALID_ID_TOKEN');
  const tokens: ProviderTokens = {
    tokenType: 'Bearer',
    accessToken: idToken.accessToken ?? null,
    refreshToken: idToken.refreshToken ?? null,
    idToken: idToken.token,
    accessTokenExpiresAt: idToken.expiresAt ? new Date(idToken.expiresAt) : null,
    refreshTokenExpiresAt: null,
    scopes: [],
  };
  const profile = await provider.userInfo({ tokens, user: idToken.user ?? null, expectedNonce: idToken.nonce }).catch(() => null);
  if (!profile) throw new DomainError('FAILED_TO_GET_USER_INFO');
  if (!profile.email) throw new DomainError('USER_EMAIL_NOT_FOUND');
  return { profile: { ...profile, email: profile.email }, tokens };
}
