import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Configuration } from 'oidc-provider';
import { pickFreePort } from '@portcullis/platform/free-port';

/** Who signs in at the test IdP next: the claims it asserts about them. */
export interface IssuerAccount {
  readonly sub: string;
  readonly email?: string;
  readonly email_verified?: boolean;
  readonly name?: string;
}

export interface IssuerClient {
  readonly clientId: string;
  readonly clientSecret: string;
}

export interface OidcIssuer {
  /** The issuer identifier, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly discoveryUrl: string;
  /** The client Portcullis is registered as. */
  readonly client: IssuerClient;
  /** Another registered client: its id tokens are the IdP's own, but not for Portcullis. */
  readonly otherClient: IssuerClient;
  /** Whoever logs in at the next authorization request (the IdP's login page, answered as that user would). */
  signInNext(account: IssuerAccount): void;
  /** Follows an authorization URL through the IdP to the redirect it ends in (the app's callback with code and state). */
  authorize(authorizationUrl: string): Promise<URL>;
  /** An id token the IdP issues to `client` for `account` through a code flow of the client's own, with `nonce`. */
  idTokenFor(account: IssuerAccount, options: { readonly client?: IssuerClient; readonly nonce: string }): Promise<string>;
  stop(): Promise<void>;
}

/** Subs starting with this get access tokens living 2 seconds, within the 5 s margin that counts as expired. */
export const SHORT_LIVED = 'short-lived-';

/** Where the app's own (native, say) client receives its codes in `idTokenFor`; the IdP only needs it registered. */
const APP_REDIRECT = 'http://127.0.0.1/app-callback';

/**
 * A real OpenID Provider (`oidc-provider`, the certified Node implementation) on a spare port, with the login
 * and consent interactions answered by the test: `signInNext` says who logs in. Keycloak and ZITADEL broker
 * providers the same way; this is what a generic OIDC provider looks like to Portcullis.
 */
export async function startOidcIssuer(options: {
  readonly redirectUris: readonly string[];
  /**
   * The IdP's own login and consent pages (oidc-provider's development interactions: any login, any password)
   * for a browser to fill in and click through, instead of the test answering them.
   */
  readonly interactive?: boolean;
}): Promise<OidcIssuer> {
  const port = await pickFreePort();
  const url = `http://127.0.0.1:${port}`;
  const client: IssuerClient = { clientId: 'portcullis', clientSecret: randomBytes(24).toString('base64url') };
  const otherClient: IssuerClient = { clientId: 'another-app', clientSecret: randomBytes(24).toString('base64url') };
  const accounts = new Map<string, IssuerAccount>();
  let next: IssuerAccount | null = null;

  const configuration: Configuration = {
    clients: [client, otherClient].map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: [...options.redirectUris, APP_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    scopes: ['openid', 'email', 'profile', 'offline_access'],
    findAccount: (_ctx, sub) => {
      // Interactive: whoever the login page is given signs in, as `signInNext` described them.
      if (options.interactive && next && !accounts.has(sub)) accounts.set(sub, { ...next, sub });
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ ...account }) } : undefined;
    },
    pkce: { required: () => false },
    // As Google's and Keycloak's do, id tokens carry the scopes' claims, for apps that sign in with one.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: options.interactive === true } },
    // The provider's own default would ask for consent on each flow; the test answers it with the login.
    issueRefreshToken: () => true,
    ...(options.interactive ? {} : { interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` } }),
    cookies: { keys: [randomBytes(32).toString('hex')] },
    ttl: {
      // A person whose sub says so gets access tokens that are already all but expired: the refresh path's case.
      AccessToken: (_ctx, token) => {
        const accountId = (token as { accountId?: unknown }).accountId;
        return typeof accountId === 'string' && accountId.startsWith(SHORT_LIVED) ? 2 : 3600;
      },
      IdToken: 3600,
      RefreshToken: 86_400,
      Interaction: 600,
      Session: 600,
      Grant: 600,
    },
  };
  // A signing key of this run's own (the provider's built-in one is a shared development key).
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new Provider(url, { ...configuration, jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-issuer' }] } });
  provider.proxy = false;
  const callback = provider.callback();

  /** The interaction page, answered as the person `signInNext` named: logged in, every scope asked granted. */
  const interact = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const details = await provider.interactionDetails(req, res);
    const account = next;
    if (!account) throw new Error('the test IdP was asked to log someone in, but signInNext named nobody');
    accounts.set(account.sub, account);
    const grant = new provider.Grant({ accountId: account.sub, clientId: String(details.params.client_id) });
    grant.addOIDCScope(typeof details.params.scope === 'string' ? details.params.scope : 'openid');
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: account.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
  };

  const server = http.createServer((req, res) => {
    if (!options.interactive && req.url?.startsWith('/interaction/')) {
      interact(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(error instanceof Error ? error.message : String(error));
      });
      return;
    }
    void callback(req, res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));

  /** A browser at the IdP: its own cookies, redirects followed until one leaves the IdP. */
  const authorize = async (authorizationUrl: string): Promise<URL> => {
    const jar = new Map<string, string>();
    let at = new URL(authorizationUrl);
    for (let hop = 0; hop < 10; hop += 1) {
      if (at.origin !== url) return at;
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const response = await fetch(at, { redirect: 'manual', headers: cookie ? { cookie } : {} });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      const location = response.headers.get('location');
      await response.body?.cancel();
      if (!location) throw new Error(`the IdP answered ${response.status} without a redirect at ${at.href}`);
      at = new URL(location, at);
    }
    throw new Error('the IdP kept redirecting');
  };

  const idTokenFor = async (account: IssuerAccount, request: { client?: IssuerClient; nonce: string }): Promise<string> => {
    const asClient = request.client ?? client;
    const verifier = randomBytes(48).toString('base64url');
    const authorization = new URL(`${url}/auth`);
    authorization.search = new URLSearchParams({
      client_id: asClient.clientId,
      response_type: 'code',
      redirect_uri: APP_REDIRECT,
      scope: 'openid email profile',
      state: randomBytes(16).toString('hex'),
      nonce: request.nonce,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    next = account;
    const back = await authorize(authorization.href);
    const code = back.searchParams.get('code');
    if (!code) throw new Error(`no code from the IdP: ${back.href}`);
    const token = await fetch(`${url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: APP_REDIRECT,
        code_verifier: verifier,
        client_id: asClient.clientId,
        client_secret: asClient.clientSecret,
      }),
    });
    const answer = (await token.json()) as { id_token?: string };
    if (!answer.id_token) throw new Error(`no id token from the IdP: ${JSON.stringify(answer)}`);
    return answer.id_token;
  };

  return {
    url,
    discoveryUrl: `${url}/.well-known/openid-configuration`,
    client,
    otherClient,
    signInNext: (account) => {
      next = account;
    },
    authorize,
    idTokenFor,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
