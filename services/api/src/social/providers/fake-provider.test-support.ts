import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';

/**
 * A provider's endpoints on a local port, answering as the provider documents, and recording what it was
 * sent, so a spec can point a provider here through its endpoint settings and check both sides.
 */

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** The body parsed as a form (token requests). */
  readonly form: URLSearchParams;
}

export interface Answer {
  readonly status?: number;
  readonly json?: unknown;
  readonly bytes?: { readonly contentType: string; readonly data: Buffer };
  readonly headers?: Readonly<Record<string, string>>;
}

/** Routes by `METHOD /path`; a function answers by what was sent. */
export type Routes = Record<string, Answer | ((request: RecordedRequest) => Answer)>;

export interface FakeProvider {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Replaces the routes and forgets the requests. */
  serve(routes: Routes): void;
  /** The one request to `METHOD /path`. */
  request(route: string): RecordedRequest;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  let routes: Routes = {};
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
      };
      requests.push(recorded);
      const route = routes[`${recorded.method} ${recorded.path}`];
      const answer: Answer = route === undefined ? { status: 404, json: { error: 'not_found' } } : typeof route === 'function' ? route(recorded) : route;
      if (answer.bytes) {
        res.writeHead(answer.status ?? 200, { 'content-type': answer.bytes.contentType, ...answer.headers });
        res.end(answer.bytes.data);
        return;
      }
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.json === undefined ? '' : JSON.stringify(answer.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    serve(next) {
      routes = next;
      requests.length = 0;
    },
    request(route) {
      const [method, path] = route.split(' ');
      const found = requests.filter((r) => r.method === method && r.path === path);
      if (found.length !== 1) throw new Error(`expected one ${route}, got ${found.length} of ${requests.map((r) => `${r.method} ${r.path}`).join(', ')}`);
      return found[0]!;
    },
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/** The client id and secret that provider specs configure. */
export const client = { clientId: 'client-id', clientSecret: 'client secret:/+' };

/** What `Authorization: Basic` carried, decoded as RFC 6749 §2.3.1 encodes it. */
export function basicCredentials(request: RecordedRequest): { id: string; secret: string } | null {
  const header = request.headers.authorization;
  if (!header?.startsWith('Basic ')) return null;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const decode = (part: string) => new URLSearchParams(`v=${part}`).get('v') ?? '';
  return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
}

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  /** The JWKS answer publishing the public half. */
  readonly jwks: { keys: object[] };
}

export async function signingKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, privateKey, publicKey, jwks: { keys: [{ ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }] } };
}

/** A token signed by `key` (an hour's life from now unless `claims` say otherwise). */
export async function signedToken(key: SigningKey, claims: JWTPayload, alg = 'RS256'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iat: now, exp: now + 3600, ...claims }).setProtectedHeader({ alg, kid: key.kid }).sign(key.privateKey);
}

/** An id token as a token endpoint hands it over; its signature is not what these specs check. */
export function unsignedToken(claims: JWTPayload): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.${Buffer.from('signature').toString('base64url')}`;
}
