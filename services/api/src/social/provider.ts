import type { ProviderUser } from '@portcullis/contracts';
/**
 * A social provider as sign-in uses it: where to send the browser, how to turn the code it brings back into
 * tokens, and who those tokens say the user is. Each provider (`providers/<id>.ts`) builds one from its
 * settings; what they share (the code exchange, refreshing, the id-token check) is in `oauth2.ts`.
 */

/** What a provider answers for a code or a refresh, as better-auth's OAuth2Tokens. */
export interface ProviderTokens {
  readonly tokenType: string | null;
  readonly accessToken: string | null;
  readonly refreshToken: string | null;
  readonly idToken: string | null;
  readonly accessTokenExpiresAt: Date | null;
  readonly refreshTokenExpiresAt: Date | null;
  /** The scopes granted, where the provider says (else those asked). */
  readonly scopes: readonly string[];
}

/** The user as a provider describes them, mapped to better-auth's fields. */
export interface ProviderProfile {
  /** The provider's stable id of the user (better-auth's `accountId`), as a string. */
  readonly id: string;
  /** Null where the provider gave none: sign-in then fails with `email_not_found`. */
  readonly email: string | null;
  /** Only what the provider asserts; a provider that says nothing gives false. */
  readonly emailVerified: boolean;
  readonly name: string;
  readonly image: string | null;
  /**
   * The provider's own answer the fields above were mapped from, as it sent it: the JSON object of its user
   * endpoint, or the claims of the id token it was read from (where several answers are combined, the main
   * one, each provider says which). better-auth's `data` (`GET /account-info`'s answer). Never tokens, and
   * never stored: only the fields above are.
   */
  readonly raw: Readonly<Record<string, unknown>>;
}

export interface AuthorizationRequest {
  readonly state: string;
  /** PKCE S256 verifier; the provider sends its challenge where it supports PKCE. */
  readonly codeVerifier: string;
  readonly redirectURI: string;
  /** Asked for beside the provider's defaults. */
  readonly scopes: readonly string[];
  readonly loginHint: string | undefined;
  /** The OIDC nonce, for providers whose id token carries one. */
  readonly nonce: string | undefined;
}

export interface CodeExchange {
  readonly code: string;
  readonly codeVerifier: string;
  readonly redirectURI: string;
  /** TikTok's and others' extra callback parameters (`device_id` for VK). */
  readonly deviceId: string | undefined;
}

export interface UserInfoRequest {
  readonly tokens: ProviderTokens;
  /** Apple sends the name only once, as a JSON `user` field on the first callback. */
  readonly user: ProviderUser | null;
  /** The nonce the id token must carry (from the flow state), when one was sent. */
  readonly expectedNonce: string | undefined;
}

export interface IdTokenSignIn {
  readonly token: string;
  readonly nonce: string | undefined;
}

export interface SocialProvider {
  /** The provider id clients name (`github`, or a generic OIDC provider's configured name). */
  readonly id: string;
  readonly name: string;
  /** The issuer the callback's `iss` parameter must match (RFC 9207), where the provider has one. */
  readonly issuer: string | null;
  /** Whether the provider's answers include an id token whose nonce the flow binds. */
  readonly usesNonce: boolean;
  /** Apple answers the callback with a form POST (`response_mode=form_post`). */
  authorizationURL(request: AuthorizationRequest): Promise<URL>;
  exchangeCode(exchange: CodeExchange): Promise<ProviderTokens>;
  /**
   * Null when the provider did not describe the user (`unable_to_get_user_info`). Throws (`ProviderRequestError`)
   * when the provider could not be asked: unreachable, a non-2xx answer, a redirect, no JSON.
   */
  userInfo(request: UserInfoRequest): Promise<ProviderProfile | null>;
  /** Absent: the provider's tokens cannot be refreshed. */
  refresh?(refreshToken: string): Promise<ProviderTokens>;
  /** Absent: no id-token sign-in (`id_token not supported`). True when the token is the provider's, for us, unexpired, with the nonce. */
  verifyIdToken?(signIn: IdTokenSignIn): Promise<boolean>;
  /**
   * Present where the provider learns its endpoints on first use (a generic OIDC provider's discovery
   * document): settles once it has, after which `issuer` is final (null before). Await it before comparing
   * the callback's `iss`; it rejects while the provider cannot be reached.
   */
  ready?(): Promise<void>;
}
