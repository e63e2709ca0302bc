import http from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
  /** The body parsed as JSON; null for an empty body. Throws on a body that is not JSON. */
  json<T = unknown>(): T;
}

const REQUEST_TIMEOUT_MS = 60_000;

/**
 * One server's connections, kept alive and shared by every client of a run: a closed-loop client holds one
 * socket at a time, so the pool grows to the number of clients and then only reuses.
 */
export class HttpTarget {
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  private readonly url: URL;

  /** `authUrl` is the auth base (…/api/auth); its origin is what the server trusts. */
  constructor(
    readonly name: string,
    readonly authUrl: string,
  ) {
    this.url = new URL(authUrl);
  }

  get origin(): string {
    return this.url.origin;
  }

  /** A client of its own: its cookie jar, its session. */
  session(): HttpSession {
    return new HttpSession(this);
  }

  request(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; setCookies: string[]; body: string }> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: this.url.hostname,
          port: this.url.port,
          method,
          path: `${this.url.pathname}${path}`,
          agent: this.agent,
          timeout: REQUEST_TIMEOUT_MS,
          headers: {
            ...headers,
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const setCookie = response.headers['set-cookie'];
            resolve({ status: response.statusCode ?? 0, setCookies: setCookie ?? [], body: Buffer.concat(chunks).toString('utf8') });
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`${method} ${path}: no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      request.on('error', reject);
      request.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * A browser-like client of one server: it keeps the cookies the server sets and sends them back, with the
 * Origin a browser sends (both servers refuse a cookie-carrying POST without a trusted one). Optionally a
 * bearer token instead, for clients that hold a token rather than cookies.
 */
export class HttpSession {
  private readonly cookies = new Map<string, string>();
  private bearer: string | null = null;

  constructor(readonly target: HttpTarget) {}

  /** Another client holding the same cookies and token: several writers on one session. */
  copy(): HttpSession {
    const copy = new HttpSession(this.target);
    for (const [name, value] of this.cookies) copy.cookies.set(name, value);
    copy.bearer = this.bearer;
    return copy;
  }

  useBearer(token: string): this {
    this.bearer = token;
    return this;
  }

  get(path: string): Promise<HttpAnswer> {
    return this.send('GET', path);
  }

  post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
    return this.send('POST', path, body, headers);
  }

  private async send(method: 'GET' | 'POST', path: string, body?: unknown, extra: Record<string, string> = {}): Promise<HttpAnswer> {
    const headers: Record<string, string> = { origin: this.target.origin, ...extra };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (this.bearer !== null) headers.authorization = `Bearer ${this.bearer}`;
    const answer = await this.target.request(method, path, headers, body);
    for (const line of answer.setCookies) this.absorb(line);
    const text = answer.body;
    return { status: answer.status, body: text, json: <T>() => (text === '' ? null : JSON.parse(text)) as T };
  }

  /** Keeps a Set-Cookie as a browser would: an empty value or a past expiry removes the cookie. */
  private absorb(line: string): void {
    const [pair, ...attributes] = line.split(';');
    const separator = pair!.indexOf('=');
    if (separator < 0) return;
    const name = pair!.slice(0, separator).trim();
    const value = pair!.slice(separator + 1).trim();
    const expired = attributes.some((attribute) => {
      const [key, raw] = attribute.split('=').map((part) => part.trim().toLowerCase());
      return (key === 'max-age' && Number(raw) <= 0) || (key === 'expires' && Date.parse(raw ?? '') < Date.now());
    });
    if (value === '' || expired) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}

/** Throws unless the answer is 2xx; the parsed body otherwise. */
export function expectOk<T>(answer: HttpAnswer, what: string): T {
  if (answer.status < 200 || answer.status > 299) throw new Error(`${what} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return answer.json<T>();
}
