import { advertisedHost, authorityOf } from './advertised-host.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Telemetry } from './telemetry.ts';

export interface Readiness {
  readonly ready: boolean;
  readonly checks: Record<string, { ok: boolean; detail?: string }>;
}

export interface MetricsServer {
  /** `http://host:port/metrics`, as other processes (the api's overview) scrape it. */
  readonly metricsUrl: string;
  close(): Promise<void>;
}

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * A worker process' (projector, mailer) own small HTTP server: `/metrics` in Prometheus text, `/healthz`
 * (the process answers) and `/readyz` (its own checks). Unauthenticated, like any exporter's port: it listens
 * on the process' HOST, loopback by default. A taken port is reported and skipped rather than fatal: a
 * process' work matters more than its figures. Answers null then.
 */
export async function serveProcessMetrics(options: {
  readonly telemetry: Telemetry;
  readonly host: string;
  /** `ADVERTISED_HOST`: where peers reach this process, when not where it listens. */
  readonly advertisedHost: string | null;
  readonly port: number;
  readonly readiness: () => Promise<Readiness>;
  readonly onListenError: (error: NodeJS.ErrnoException) => void;
}): Promise<MetricsServer | null> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, { code: 'METHOD_NOT_ALLOWED' });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      void options.readiness().then(
        (readiness) => json(readiness.ready ? 200 : 503, { status: readiness.ready ? 'ready' : 'not_ready', checks: readiness.checks }),
        (error: unknown) => json(503, { status: 'not_ready', checks: { process: { ok: false, detail: error instanceof Error ? error.message : String(error) } } }),
      );
      return;
    }
    if (path === '/metrics') {
      void options.telemetry.prometheusText().then(
        (text) => response.writeHead(200, { 'content-type': PROMETHEUS_TEXT, 'cache-control': 'no-store' }).end(text),
        () => json(500, { code: 'INTERNAL_SERVER_ERROR' }),
      );
      return;
    }
    json(404, { code: 'NOT_FOUND' });
  });
  server.keepAliveTimeout = 65_000;
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      options.onListenError(error);
      resolve(false);
    });
    server.listen({ host: options.host, port: options.port }, () => resolve(true));
  });
  if (!listening) return null;
  const address = server.address() as AddressInfo;
  return {
    metricsUrl: `http://${authorityOf(advertisedHost(address.address, options.advertisedHost), address.port)}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
