import type { SocialProviderSettings } from '@portcullis/platform';
import {
  authorizationURL,
  exchangeAuthorizationCode,
  mergeScopes,
  refreshTokens,
  type AuthorizationParameters,
  type TokenClient,
  type TokenEndpoint,
} from './oauth2.ts';
import type { IdTokenSignIn, ProviderProfile, SocialProvider, UserInfoRequest } from './provider.ts';

/**
 * A provider as facts: its endpoints, scopes, whether it takes PKCE, how its client authenticates, and how
 * it describes the user. Each `providers/<id>.ts` states those; the flow they share is here.
 */
export interface OAuth2ProviderFacts {
  readonly id: string;
  readonly name: string;
  readonly authorization: Omit<AuthorizationParameters, 'redirectURI' | 'state' | 'scopes' | 'codeVerifier' | 'loginHint' | 'nonce'> & {
    readonly defaultScopes: readonly string[];
    /** Sends the PKCE challenge, and the verifier with the code. */
    readonly pkce: boolean;
    /** Passes the sign-in's login hint on (better-auth does for some providers only). */
    readonly loginHint: boolean;
    /** VK ID binds the code to the callback's `device_id`, which the exchange must send back. */
    readonly deviceBound?: boolean;
  };
  readonly token: TokenEndpoint;
  /** False: the provider's tokens are not refreshed. Else extra form fields of a refresh (Microsoft's scope). */
  readonly refresh: false | { readonly extra?: Readonly<Record<string, string>> };
  readonly userInfo: (request: UserInfoRequest) => Promise<ProviderProfile | null>;
  readonly verifyIdToken?: (signIn: IdTokenSignIn) => Promise<boolean>;
  /** Sends the flow's nonce, which the id token must then carry. */
  readonly usesNonce?: boolean;
  readonly issuer?: string | null;
}

export function oauth2Provider(facts: OAuth2ProviderFacts): SocialProvider {
  const { authorization, token } = facts;
  const { defaultScopes, pkce, loginHint, deviceBound, ...parameters } = authorization;
  const usesNonce = facts.usesNonce === true;
  const refresh = facts.refresh;
  return {
    id: facts.id,
    name: facts.name,
    issuer: facts.issuer ?? null,
    usesNonce,
    authorizationURL: async (request) =>
      authorizationURL({
        ...parameters,
        redirectURI: request.redirectURI,
        state: request.state,
        scopes: mergeScopes(defaultScopes, request.scopes),
        codeVerifier: pkce ? request.codeVerifier : undefined,
        loginHint: loginHint ? request.loginHint : undefined,
        nonce: usesNonce ? request.nonce : undefined,
      }),
    exchangeCode: (exchange) =>
      exchangeAuthorizationCode(token, {
        code: exchange.code,
        redirectURI: exchange.redirectURI,
        codeVerifier: pkce ? exchange.codeVerifier : undefined,
        deviceId: deviceBound === true ? exchange.deviceId : undefined,
      }),
    userInfo: facts.userInfo,
    ...(refresh ? { refresh: (refreshToken: string) => refreshTokens(token, refreshToken, refresh.extra) } : {}),
    ...(facts.verifyIdToken ? { verifyIdToken: facts.verifyIdToken } : {}),
  };
}

/** The client as most providers take it: id and secret in the form body (client_secret_post). */
export function postedClient(settings: SocialProviderSettings): TokenClient {
  return { clientId: settings.clientId, clientSecret: settings.clientSecret, authentication: 'post' };
}

/** The client as HTTP Basic credentials (client_secret_basic). */
export function basicClient(settings: SocialProviderSettings): TokenClient {
  return { clientId: settings.clientId, clientSecret: settings.clientSecret, authentication: 'basic' };
}
