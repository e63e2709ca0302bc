import type { OidcProviderSettings } from '@portcullis/platform';
import type { JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import {
  authorizationURL,
  exchangeAuthorizationCode,
  fetchJson,
  fetchWithBearer,
  idTokenClaims,
  mergeScopes,
  ProviderRequestError,
  refreshTokens,
  remoteKeys,
  verifyIdToken,
  type IdTokenPolicy,
  type TokenEndpoint,
} from '../oauth2.ts';
import { claimedFlag, optionalText, rawAnswer } from '../profile-fields.ts';
import type { ProviderProfile, ProviderTokens, SocialProvider } from '../provider.ts';

/** What Portcullis reads of an OpenID Provider's configuration (OIDC Discovery 1.0 §3). */
const providerConfiguration = z.object({
  issuer: z.url(),
  authorization_endpoint: z.url(),
  token_endpoint: z.url(),
  userinfo_endpoint: z.url().optional(),
  jwks_uri: z.url().optional(),
  id_token_signing_alg_values_supported: z.array(z.string()).optional(),
  token_endpoint_auth_methods_supported: z.array(z.string()).optional(),
});
type ProviderConfiguration = z.infer<typeof providerConfiguration>;

interface Discovered {
  readonly configuration: ProviderConfiguration;
  readonly token: TokenEndpoint;
  /** Null when the provider publishes no keys: its id tokens are then read, never believed from a client. */
  readonly keys: JWTVerifyGetKey | null;
  readonly algorithms: readonly string[] | undefined;
}

const userClaims = z.object({ sub: z.string().min(1), email: optionalText, email_verified: claimedFlag, name: optionalText, preferred_username: optionalText, picture: optionalText });
type UserClaims = z.infer<typeof userClaims>;

/** Claims as read, with the answer they were read from as the provider sent it (the profile's `raw`). */
interface ReadClaims {
  readonly claims: UserClaims;
  readonly raw: Readonly<Record<string, unknown>>;
}

function readClaims(answer: unknown): ReadClaims | null {
  const parsed = userClaims.safeParse(answer);
  return parsed.success ? { claims: parsed.data, raw: rawAnswer(answer) } : null;
}

function policyOf(d: Discovered, keys: JWTVerifyGetKey, clientId: string): IdTokenPolicy {
  return { keys, issuer: d.configuration.issuer, audience: clientId, ...(d.algorithms ? { algorithms: d.algorithms } : {}) };
}

function profileOf(claims: UserClaims, raw: ReadClaims['raw']): ProviderProfile {
  return { id: claims.sub, email: claims.email, emailVerified: claims.email_verified, name: claims.name ?? claims.preferred_username ?? '', image: claims.picture, raw };
}

/** A generic OpenID Connect provider, configured by its discovery document, read on first use and kept. */
export function oidcProvider(settings: OidcProviderSettings): SocialProvider {
  let discovery: Promise<Discovered> | null = null;
  let issuer: string | null = null;

  async function load(): Promise<Discovered> {
    const answer = providerConfiguration.safeParse(await fetchJson(settings.discoveryUrl));
    if (!answer.success) throw new ProviderRequestError(settings.discoveryUrl, 200, 'not an OpenID Provider configuration');
    const configuration = answer.data;
    // better-auth posts the secret; a provider that lists only Basic gets Basic.
    const methods = configuration.token_endpoint_auth_methods_supported;
    const basicOnly = methods !== undefined && !methods.includes('client_secret_post') && methods.includes('client_secret_basic');
    issuer = configuration.issuer;
    return {
      configuration,
      token: {
        url: configuration.token_endpoint,
        client: { clientId: settings.clientId, clientSecret: settings.clientSecret, authentication: basicOnly ? 'basic' : 'post' },
      },
      keys: configuration.jwks_uri ? remoteKeys(configuration.jwks_uri) : null,
      // `none` is never accepted, whatever the document says.
      algorithms: configuration.id_token_signing_alg_values_supported?.filter((alg) => alg !== 'none'),
    };
  }

  /** One discovery shared by concurrent first uses; a failed one is forgotten so the next use tries again. */
  function discovered(): Promise<Discovered> {
    discovery ??= load().catch((error: unknown) => {
      discovery = null;
      throw error;
    });
    return discovery;
  }

  /** The id token's claims: verified with the provider's keys and the flow's nonce, or null when they fail. */
  async function idTokenUser(d: Discovered, idToken: string, expectedNonce: string | undefined): Promise<ReadClaims | null> {
    if (d.keys !== null) {
      if (!(await verifyIdToken(idToken, expectedNonce, policyOf(d, d.keys, settings.clientId)))) return null;
    }
    const claims = idTokenClaims(idToken);
    // Without keys the token is still the token endpoint's own answer; its nonce must still be the flow's.
    if (claims === null || (expectedNonce !== undefined && claims.nonce !== expectedNonce)) return null;
    return readClaims(claims);
  }

  async function userInfoClaims(d: Discovered, tokens: ProviderTokens): Promise<ReadClaims | null> {
    const endpoint = d.configuration.userinfo_endpoint;
    if (endpoint === undefined || tokens.accessToken === null) return null;
    return readClaims(await fetchWithBearer(endpoint, tokens.accessToken));
  }

  return {
    id: settings.id,
    name: settings.id,
    get issuer() {
      return issuer;
    },
    usesNonce: true,
    async ready() {
      await discovered();
    },
    async authorizationURL(request) {
      const d = await discovered();
      // OpenID Connect requests are those that ask for `openid`.
      const scopes = mergeScopes(['openid'], mergeScopes(settings.scopes, request.scopes));
      return authorizationURL({
        endpoint: d.configuration.authorization_endpoint,
        clientId: settings.clientId,
        redirectURI: request.redirectURI,
        state: request.state,
        scopes,
        codeVerifier: request.codeVerifier,
        loginHint: request.loginHint,
        nonce: request.nonce,
      });
    },
    async exchangeCode(exchange) {
      const d = await discovered();
      return exchangeAuthorizationCode(d.token, { code: exchange.code, redirectURI: exchange.redirectURI, codeVerifier: exchange.codeVerifier });
    },
    async userInfo({ tokens, expectedNonce }) {
      const d = await discovered();
      const fromIdToken = tokens.idToken === null ? null : await idTokenUser(d, tokens.idToken, expectedNonce);
      // An id token that fails its checks is refused outright, not passed over for the user endpoint.
      if (tokens.idToken !== null && fromIdToken === null) return null;
      let fromEndpoint: ReadClaims | null;
      try {
        fromEndpoint = await userInfoClaims(d, tokens);
      } catch (error) {
        if (fromIdToken === null) throw error;
        fromEndpoint = null;
      }
      // OIDC Core §5.3.2: a user-info answer about another subject than the id token's is not believed.
      if (fromEndpoint !== null && fromIdToken !== null && fromEndpoint.claims.sub !== fromIdToken.claims.sub) return null;
      // `raw` is the user-info answer where there is one, else the id token's claims.
      if (fromEndpoint === null) return fromIdToken === null ? null : profileOf(fromIdToken.claims, fromIdToken.raw);
      if (fromIdToken === null) return profileOf(fromEndpoint.claims, fromEndpoint.raw);
      const endpoint = fromEndpoint.claims;
      const token = fromIdToken.claims;
      const merged: UserClaims = {
        sub: endpoint.sub,
        email: endpoint.email ?? token.email,
        // The verification claim goes with the address it was made about.
        email_verified: endpoint.email !== null ? endpoint.email_verified : token.email_verified,
        name: endpoint.name ?? token.name,
        preferred_username: endpoint.preferred_username ?? token.preferred_username,
        picture: endpoint.picture ?? token.picture,
      };
      return profileOf(merged, fromEndpoint.raw);
    },
    async refresh(refreshToken) {
      return refreshTokens((await discovered()).token, refreshToken);
    },
    async verifyIdToken({ token, nonce }) {
      let d: Discovered;
      try {
        d = await discovered();
      } catch {
        return false;
      }
      if (d.keys === null) return false;
      return verifyIdToken(token, nonce, policyOf(d, d.keys, settings.clientId));
    },
  };
}
