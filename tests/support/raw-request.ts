import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface RawRequest {
  readonly method: string;
  /**
   * The request target exactly as it goes on the request line: a path as written (`/api/auth/%73ign-in/email`,
   * which fetch and `new URL` would leave alone too) or an absolute form (`http://host/api/auth/...`), which
   * only a proxy-style request sends.
   */
  readonly target: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** The address the connection comes from: any 127.x address is this machine, and a client of its own to the api. */
  readonly localAddress?: string;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

/** One request over a connection of its own to `origin` (`http://127.0.0.1:3000`), its request line as given. */
export function rawRequest(origin: string, request: RawRequest): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: hostname,
        port: Number(port),
        method: request.method,
        path: request.target,
        headers: {
          host: `${hostname}:${port}`,
          connection: 'close',
          ...(request.body !== undefined ? { 'content-length': String(Buffer.byteLength(request.body)) } : {}),
          ...request.headers,
        },
        agent: false,
        ...(request.localAddress ? { localAddress: request.localAddress } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}
