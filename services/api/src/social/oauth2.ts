import { createHash, timingSafeEqual } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import type { ProviderTokens } from './provider.ts';

/**
 * What the providers share: the authorization URL, the token endpoint (code exchange and refresh), JSON
 * fetches, and id tokens (reading the one the token endpoint just sent, verifying one a client brings).
 */

/** A provider that does not answer within this is abandoned: the sign-in fails rather than hangs. */
const REQUEST_TIMEOUT_MS = 10_000;

/** A provider endpoint that failed, redirected, timed out or answered something unusable. */
export class ProviderRequestError extends Error {
  constructor(
    readonly url: string,
    readonly status: number | null,
    detail: string,
  ) {
    super(`${new URL(url).origin}${new URL(url).pathname}: ${detail}`);
    this.name = 'ProviderRequestError';
  }
}

/** The PKCE S256 challenge (RFC 7636 §4.2): base64url of the verifier's SHA-256, unpadded. */
export function codeChallenge(codeVerifier: string): string {
  return createHash('sha256').update(codeVerifier).digest('base64url');
}

/** The defaults, then what this sign-in asks for, each once. */
export function mergeScopes(defaults: readonly string[], requested: readonly string[]): string[] {
  return [...new Set([...defaults, ...requested])];
}

export interface AuthorizationParameters {
  readonly endpoint: string;
  readonly clientId: string;
  /** TikTok names its client `client_key`. */
  readonly clientIdParameter?: string;
  readonly redirectURI: string;
  readonly state: string;
  /** Omitted from the URL when empty (Zoom takes the app's configured scopes). */
  readonly scopes: readonly string[];
  readonly scopeSeparator?: string;
  /** Given only where the provider supports PKCE. */
  readonly codeVerifier?: string | undefined;
  readonly loginHint?: string | undefined;
  readonly nonce?: string | undefined;
  readonly responseType?: string;
  /** Provider-specific parameters (`prompt`, `response_mode`, ...); undefined ones are left out. */
  readonly extra?: Readonly<Record<string, string | undefined>>;
}

export function authorizationURL(p: AuthorizationParameters): URL {
  const url = new URL(p.endpoint);
  url.searchParams.set('response_type', p.responseType ?? 'code');
  url.searchParams.set(p.clientIdParameter ?? 'client_id', p.clientId);
  url.searchParams.set('state', p.state);
  if (p.scopes.length > 0) url.searchParams.set('scope', p.scopes.join(p.scopeSeparator ?? ' '));
  url.searchParams.set('redirect_uri', p.redirectURI);
  if (p.loginHint) url.searchParams.set('login_hint', p.loginHint);
  if (p.nonce) url.searchParams.set('nonce', p.nonce);
  if (p.codeVerifier) {
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('code_challenge', codeChallenge(p.codeVerifier));
  }
  for (const [name, value] of Object.entries(p.extra ?? {})) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url;
}

/** Who asks at a token endpoint, and how the client proves it (RFC 6749 §2.3.1). */
export interface TokenClient {
  readonly clientId: string;
  readonly clientIdParameter?: string;
  /** Null: a public client (PKCE alone). A function: a secret made per use (Apple's signed JWT). */
  readonly clientSecret: string | null | (() => Promise<string>);
  /** `basic`: HTTP Basic with the form-encoded id and secret; `post`: both in the form body. */
  readonly authentication: 'basic' | 'post';
}

export interface TokenEndpoint {
  readonly url: string;
  readonly client: TokenClient;
  /** Reddit refuses requests without a User-Agent of their own. */
  readonly headers?: Readonly<Record<string, string>>;
}

const tokenAnswer = z.object({
  access_token: z.string().optional(),
  refresh_token: z.string().nullish(),
  id_token: z.string().nullish(),
  token_type: z.string().nullish(),
  expires_in: z.coerce.number().nullish(),
  refresh_token_expires_in: z.coerce.number().nullish(),
  // TikTok's (and Keycloak's) name for the refresh token's lifetime.
  refresh_expires_in: z.coerce.number().nullish(),
  scope: z.union([z.string(), z.array(z.string())]).nullish(),
  error: z.string().optional(),
  error_description: z.string().optional(),
});

function expiresAt(seconds: number | null | undefined, now: number): Date | null {
  return seconds && Number.isFinite(seconds) && seconds > 0 ? new Date(now + seconds * 1000) : null;
}

/** RFC 6749 separates granted scopes with spaces; GitHub and TikTok answer with commas, and some with a list. */
function scopesOf(scope: string | readonly string[] | null | undefined): string[] {
  const listed = typeof scope === 'string' ? scope.split(/[\s,]+/) : (scope ?? []);
  return listed.map((s) => s.trim()).filter((s) => s !== '');
}

/** RFC 6749 §2.3.1: id and secret are form-encoded before they are joined and base64-encoded. */
function basicCredentials(clientId: string, secret: string): string {
  const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(secret)}`).toString('base64')}`;
}

async function tokenRequest(endpoint: TokenEndpoint, body: URLSearchParams): Promise<ProviderTokens> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    ...endpoint.headers,
  };
  const { client } = endpoint;
  const secret = typeof client.clientSecret === 'function' ? await client.clientSecret() : client.clientSecret;
  if (client.authentication === 'basic' && secret !== null) {
    headers.authorization = basicCredentials(client.clientId, secret);
  } else {
    body.set(client.clientIdParameter ?? 'client_id', client.clientId);
    if (secret !== null) body.set('client_secret', secret);
  }
  const now = Date.now();
  const answer = tokenAnswer.safeParse(await fetchJson(endpoint.url, { method: 'POST', headers, body }));
  if (!answer.success) throw new ProviderRequestError(endpoint.url, 200, 'the token answer is not an OAuth token response');
  const t = answer.data;
  // GitHub answers a refused code with 200 and an `error` field.
  if (t.error !== undefined || t.access_token === undefined) {
    throw new ProviderRequestError(endpoint.url, 200, t.error ? `${t.error}${t.error_description ? `: ${t.error_description}` : ''}` : 'no access_token');
  }
  return {
    tokenType: t.token_type ?? null,
    accessToken: t.access_token,
    refreshToken: t.refresh_token ?? null,
    idToken: t.id_token ?? null,
    accessTokenExpiresAt: expiresAt(t.expires_in, now),
    refreshTokenExpiresAt: expiresAt(t.refresh_token_expires_in ?? t.refresh_expires_in, now),
    scopes: scopesOf(t.scope),
  };
}

export interface CodeGrant {
  readonly code: string;
  readonly redirectURI: string;
  /** Sent only where the provider supports PKCE. */
  readonly codeVerifier?: string | undefined;
  /** VK ID binds the code to the device that got it. */
  readonly deviceId?: string | undefined;
}

export function exchangeAuthorizationCode(endpoint: TokenEndpoint, grant: CodeGrant): Promise<ProviderTokens> {
  const body = new URLSearchParams({ grant_type: 'authorization_code', code: grant.code, redirect_uri: grant.redirectURI });
  if (grant.codeVerifier) body.set('code_verifier', grant.codeVerifier);
  if (grant.deviceId) body.set('device_id', grant.deviceId);
  return tokenRequest(endpoint, body);
}

export function refreshTokens(
  endpoint: TokenEndpoint,
  refreshToken: string,
  extra: Readonly<Record<string, string>> = {},
): Promise<ProviderTokens> {
  const body = new URLSearchParams({ ...extra, grant_type: 'refresh_token', refresh_token: refreshToken });
  return tokenRequest(endpoint, body);
}

/** Reads a response body as JSON; a provider that answers anything else has failed. */
async function jsonBody(url: string, response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderRequestError(url, response.status, 'the answer is not JSON');
  }
}

/**
 * A provider call that answered 2xx, or a ProviderRequestError. Redirects are refused, not followed: an
 * endpoint that redirects is misconfigured or hostile, and following would carry the code or bearer token
 * (or a server-side request) somewhere else.
 */
export async function providerFetch(url: string, init: RequestInit = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (error) {
    throw new ProviderRequestError(url, null, error instanceof Error ? error.message : String(error));
  }
  if (response.status >= 300 && response.status < 400) {
    throw new ProviderRequestError(url, response.status, 'redirected; configure the final URL');
  }
  if (!response.ok) throw new ProviderRequestError(url, response.status, `answered ${response.status}${await oauthErrorOf(response)}`);
  return response;
}

/** An OAuth error answer's code (`invalid_grant`), which says what went wrong without any secret. */
async function oauthErrorOf(response: Response): Promise<string> {
  try {
    const answer: unknown = JSON.parse(await response.text());
    const code = typeof answer === 'object' && answer !== null && 'error' in answer ? answer.error : undefined;
    return typeof code === 'string' && /^[\w.-]{1,64}$/.test(code) ? ` ${code}` : '';
  } catch {
    return '';
  }
}

/** A provider call that answers JSON. */
export async function fetchJson(url: string, init: RequestInit = {}): Promise<unknown> {
  return jsonBody(url, await providerFetch(url, init));
}

/** A GET with the access token as a bearer token (RFC 6750). */
export function fetchWithBearer(url: string, accessToken: string, headers: Readonly<Record<string, string>> = {}): Promise<unknown> {
  return fetchJson(url, { headers: { accept: 'application/json', ...headers, authorization: `Bearer ${accessToken}` } });
}

/**
 * The claims of an id token the provider's token endpoint just answered, unverified: it came straight
 * from the provider over TLS to a client that authenticated itself (OIDC Core §3.1.3.7, item 6). Null
 * when it is no JWT. Never use this on a token a client brought: that is `verifyIdToken`'s.
 */
export function idTokenClaims(idToken: string | null): JWTPayload | null {
  if (idToken === null) return null;
  try {
    return decodeJwt(idToken);
  } catch {
    return null;
  }
}

/**
 * A provider's signing keys, fetched when a token names a key not yet held and kept by jose (which
 * refuses a redirect or any answer but 200).
 */
export function remoteKeys(jwksUrl: string): JWTVerifyGetKey {
  return createRemoteJWKSet(new URL(jwksUrl), { timeoutDuration: REQUEST_TIMEOUT_MS });
}

export interface IdTokenPolicy {
  readonly keys: JWTVerifyGetKey;
  /** Undefined only where `claims` checks the issuer instead (Microsoft's multi-tenant endpoints). */
  readonly issuer: string | readonly string[] | undefined;
  /** The client id, or each id a token may be issued to (a native app's too). */
  readonly audience: string | readonly string[];
  /** Pinned where the provider signs with one algorithm only, so no other is tried. */
  readonly algorithms?: readonly string[];
  /** How old a token may be (`1h`), for providers whose tokens are meant to be used at once. */
  readonly maxTokenAge?: string;
  /** Apple's native SDKs put the nonce's SHA-256 (hex) in the token rather than the nonce. */
  readonly nonceMayBeHashed?: boolean;
  /** A check on the verified claims that issuer, audience and expiry do not cover. */
  readonly claims?: (payload: JWTPayload) => boolean;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function nonceMatches(claim: unknown, nonce: string, mayBeHashed: boolean): boolean {
  if (typeof claim !== 'string') return false;
  if (sameText(claim, nonce)) return true;
  return mayBeHashed && sameText(claim, createHash('sha256').update(nonce).digest('hex'));
}

/**
 * Whether a token a client brings is the provider's (its keys' signature), names the provider as issuer
 * and us as audience, has not expired, and carries the nonce when one is given. Any failure, a network
 * one too, is false: a token that cannot be checked is not believed.
 */
export async function verifyIdToken(token: string, nonce: string | undefined, policy: IdTokenPolicy): Promise<boolean> {
  try {
    const { payload } = await jwtVerify(token, policy.keys, {
      issuer: policy.issuer as string | string[] | undefined,
      audience: policy.audience as string | string[],
      requiredClaims: ['exp'],
      ...(policy.algorithms ? { algorithms: [...policy.algorithms] } : {}),
      ...(policy.maxTokenAge ? { maxTokenAge: policy.maxTokenAge } : {}),
    });
    if (nonce !== undefined && !nonceMatches(payload.nonce, nonce, policy.nonceMayBeHashed === true)) return false;
    return policy.claims ? policy.claims(payload) : true;
  } catch {
    return false;
  }
}
