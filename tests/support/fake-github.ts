import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { pickFreePort } from '@portcullis/platform/free-port';

/** Who GitHub says signs in next: the profile and the email list (`user:email`). */
export interface GithubPerson {
  readonly id: number;
  readonly login: string;
  readonly name: string | null;
  readonly emails: ReadonlyArray<{ readonly email: string; readonly primary: boolean; readonly verified: boolean }>;
  /** GitHub's API fails for this person's token (an outage between the exchange and the profile). */
  readonly apiDown?: boolean;
}

export interface FakeGithub {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The env that points Portcullis's GitHub provider here. */
  readonly env: Readonly<Record<string, string>>;
  signInNext(person: GithubPerson): void;
  /** What GitHub's authorize page would do for the person: redirect to the app with a code and the state. */
  authorize(authorizationUrl: string): Promise<URL>;
  /** Token requests whose PKCE verifier did not match the challenge of their code. */
  readonly refusedVerifiers: number;
  close(): Promise<void>;
}

/**
 * GitHub's OAuth and REST endpoints as its documentation gives them, on a spare port: the authorize redirect,
 * the token exchange (JSON with `Accept: application/json`; the code's PKCE challenge checked against the
 * verifier, the client secret checked), `GET /user` and `GET /user/emails`. GitHub is no OpenID provider:
 * this is the other half of the providers, end to end through the api.
 */
export async function startFakeGithub(): Promise<FakeGithub> {
  const port = await pickFreePort();
  const url = `http://127.0.0.1:${port}`;
  const clientId = `Iv1.${randomBytes(8).toString('hex')}`;
  const clientSecret = randomBytes(20).toString('hex');
  const codes = new Map<string, { person: GithubPerson; challenge: string | null; redirectUri: string }>();
  const tokens = new Map<string, GithubPerson>();
  let next: GithubPerson | null = null;
  let refusedVerifiers = 0;

  const json = (res: http.ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = new URL(req.url ?? '/', url);
      if (req.method === 'GET' && at.pathname === '/login/oauth/authorize') {
        if (!next || at.searchParams.get('client_id') !== clientId) return json(res, 400, { error: 'bad_request' });
        const code = randomBytes(10).toString('hex');
        const redirectUri = at.searchParams.get('redirect_uri')!;
        codes.set(code, { person: next, challenge: at.searchParams.get('code_challenge'), redirectUri });
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', at.searchParams.get('state') ?? '');
        res.writeHead(302, { location: back.href });
        return res.end();
      }
      if (req.method === 'POST' && at.pathname === '/login/oauth/access_token') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        const issued = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) return json(res, 200, { error: 'incorrect_client_credentials' });
        if (!issued || form.get('redirect_uri') !== issued.redirectUri) return json(res, 200, { error: 'bad_verification_code' });
        const verifier = form.get('code_verifier') ?? '';
        if (issued.challenge !== createHash('sha256').update(verifier).digest('base64url')) {
          refusedVerifiers += 1;
          return json(res, 200, { error: 'bad_verification_code' });
        }
        const token = `gho_${randomBytes(16).toString('hex')}`;
        tokens.set(token, issued.person);
        return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      }
      const person = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
      if (!person) return json(res, 401, { message: 'Bad credentials' });
      if (person.apiDown) return json(res, 503, { message: 'Service Unavailable' });
      if (req.method === 'GET' && at.pathname === '/user') {
        return json(res, 200, { id: person.id, login: person.login, name: person.name, email: null, avatar_url: `${url}/avatars/${person.id}` });
      }
      if (req.method === 'GET' && at.pathname === '/user/emails') return json(res, 200, person.emails);
      return json(res, 404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));

  return {
    url,
    clientId,
    clientSecret,
    env: {
      AUTH_GITHUB_CLIENT_ID: clientId,
      AUTH_GITHUB_CLIENT_SECRET: clientSecret,
      AUTH_GITHUB_AUTHORIZATION_URL: `${url}/login/oauth/authorize`,
      AUTH_GITHUB_TOKEN_URL: `${url}/login/oauth/access_token`,
      AUTH_GITHUB_USERINFO_URL: `${url}/user`,
    },
    signInNext: (person) => {
      next = person;
    },
    authorize: async (authorizationUrl) => {
      const response = await fetch(authorizationUrl, { redirect: 'manual' });
      await response.body?.cancel();
      const location = response.headers.get('location');
      if (response.status !== 302 || !location) throw new Error(`the fake GitHub answered ${response.status} to ${authorizationUrl}`);
      return new URL(location);
    },
    get refusedVerifiers() {
      return refusedVerifiers;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
