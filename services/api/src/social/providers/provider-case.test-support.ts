import type { SocialProviderSettings } from '@portcullis/platform';
import type { ProviderProfile, ProviderTokens, SocialProvider, UserInfoRequest } from '../provider.ts';
import { client, type FakeProvider, type Routes } from './fake-provider.test-support.ts';

/**
 * One provider as the table-driven spec (providers.unit.spec.ts) checks it: what its authorization URL
 * holds, what its code exchange sends and makes of the answer, and the profiles it maps.
 */
export interface ProviderCase {
  readonly id: string;
  readonly build: (fake: FakeProvider) => SocialProvider;
  readonly authorize: {
    readonly path: string;
    readonly clientIdParameter?: string;
    readonly responseType?: string;
    readonly defaultScopes: readonly string[];
    readonly scopeSeparator?: string;
    readonly pkce: boolean;
    readonly loginHint: boolean;
    readonly params?: Readonly<Record<string, string>>;
  };
  readonly token: {
    readonly path: string;
    readonly authentication: 'post' | 'basic';
    readonly clientIdParameter?: string;
    readonly headers?: Readonly<Record<string, string>>;
    /** The provider's answer, in the shape its documentation gives. */
    readonly answer: Record<string, unknown>;
    readonly expected: Partial<ProviderTokens>;
    /** Extra fields a refresh sends. */
    readonly refreshExtra?: Readonly<Record<string, string>>;
  };
  /** The first is the usual profile; the others its edge cases (unverified or missing email...). */
  readonly profiles: readonly ProfileScenario[];
}

export interface ProfileScenario {
  readonly name: string;
  readonly routes: Routes;
  readonly tokens?: Partial<ProviderTokens>;
  readonly user?: UserInfoRequest['user'];
  readonly profile: ProviderProfile | null;
  /** What the provider's user endpoints must have been sent. */
  readonly check?: (fake: FakeProvider) => void;
}

/** Every endpoint moved to the fake. */
export function settingsAt(fake: FakeProvider): SocialProviderSettings {
  return {
    ...client,
    authorizationUrl: `${fake.url}/authorize`,
    tokenUrl: `${fake.url}/token`,
    userInfoUrl: `${fake.url}/user`,
    jwksUrl: `${fake.url}/jwks`,
    issuer: fake.url,
  };
}

/** Tokens as an exchange gives them, for handing to userInfo. */
export function tokensWith(tokens: Partial<ProviderTokens>): ProviderTokens {
  return {
    tokenType: 'Bearer',
    accessToken: 'access-token',
    refreshToken: null,
    idToken: null,
    accessTokenExpiresAt: null,
    refreshTokenExpiresAt: null,
    scopes: [],
    ...tokens,
  };
}

/** A bearer-authenticated GET answering `json`, refusing any other token. */
export function bearerJson(json: unknown): Routes[string] {
  return (request) => (request.headers.authorization === 'Bearer access-token' ? { json } : { status: 401, json: { error: 'invalid_token' } });
}
