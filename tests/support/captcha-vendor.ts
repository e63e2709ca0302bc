import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One siteverify call as the fake vendor received it. */
export interface SiteVerifyCall {
  readonly path: string;
  readonly contentType: string;
  /** The fields, parsed from JSON or from the form, whichever was sent. */
  readonly fields: Record<string, unknown>;
}

/**
 * A stand-in for the captcha vendors' siteverify services (the one third party the tests fake), on a local
 * port. The token decides the verdict, so one server serves every test:
 *   `pass` → success; `fail` → failure with error codes; `score:<n>` → success with a reCAPTCHA v3 score;
 *   `http-500` → a server error; `not-json` → a 200 that is not JSON; `hang` → no answer until closed.
 */
export class FakeCaptchaVendor {
  readonly calls: SiteVerifyCall[] = [];
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<FakeCaptchaVendor> {
    let vendor: FakeCaptchaVendor | undefined;
    const server = createServer((request, response) => void vendor!.handle(request, response));
    const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
    vendor = new FakeCaptchaVendor(server, port);
    return vendor;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  callsTo(path: string): SiteVerifyCall[] {
    return this.calls.filter((c) => c.path === path);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const contentType = String(request.headers['content-type'] ?? '');
    const fields: Record<string, unknown> = contentType.includes('application/json')
      ? (JSON.parse(raw) as Record<string, unknown>)
      : Object.fromEntries(new URLSearchParams(raw));
    this.calls.push({ path: request.url ?? '', contentType, fields });

    const token = typeof fields.response === 'string' ? fields.response : '';
    const json = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (token === 'hang') {
      this.hanging.add(response);
      return;
    }
    if (token === 'http-500') return json(500, { error: 'internal' });
    if (token === 'not-json') {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
      return;
    }
    if (token === 'pass') return json(200, { success: true, hostname: 'localhost' });
    const score = /^score:(\d+(\.\d+)?)$/.exec(token);
    if (score) return json(200, { success: true, score: Number(score[1]), action: 'login', hostname: 'localhost' });
    return json(200, { success: false, 'error-codes': ['invalid-input-response'] });
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
