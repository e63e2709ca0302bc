import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  /** `http://127.0.0.1:<port>`: what clients talk to, and the apis' BASE_URL. */
  readonly url: string;
  readonly port: number;
  /** Requests relayed to each upstream, in the order given. */
  readonly relayed: readonly number[];
  close(): Promise<void>;
}

/** Headers that describe one hop's connection and must not be passed on (RFC 9110, 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

function passedOn(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const kept: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) kept[name] = value;
  return kept;
}

/**
 * The load balancer in front of several api processes, as nginx in the compose file is: each request goes to
 * the next upstream in turn, over kept-alive connections, with the client's address appended to
 * X-Forwarded-For (what the apis believe with AUTH_TRUSTED_PROXIES) and the host and scheme it was asked on.
 * An upstream that cannot be reached is answered 502; nothing is retried elsewhere (a retried POST could
 * run twice).
 */
export async function startRoundRobinProxy(upstreams: readonly string[], port = 0): Promise<RoundRobinProxy> {
  if (upstreams.length === 0) throw new Error('a proxy needs at least one upstream');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const relayed = upstreams.map(() => 0);
  let next = 0;
  const server = http.createServer((request, response) => {
    const index = next;
    next = (next + 1) % upstreams.length;
    relayed[index]! += 1;
    const upstream = new URL(request.url ?? '/', upstreams[index]);
    const headers = passedOn(request.headers);
    const forwardedFor = request.headers['x-forwarded-for'];
    const client = request.socket.remoteAddress ?? '';
    headers['x-forwarded-for'] = forwardedFor ? `${String(forwardedFor)}, ${client}` : client;
    headers['x-forwarded-host'] = request.headers.host ?? '';
    headers['x-forwarded-proto'] = 'http';
    const relay = http.request(upstream, { method: request.method, headers, agent }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, passedOn(answer.headers));
      answer.pipe(response);
    });
    relay.on('error', (error) => {
      if (response.headersSent) response.destroy(error);
      else response.writeHead(502, { 'content-type': 'text/plain' }).end(`upstream ${upstreams[index]}: ${error.message}`);
    });
    request.pipe(relay);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const listening = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${listening}`,
    port: listening,
    relayed,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
