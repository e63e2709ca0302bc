import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { metrics } from '@opentelemetry/api';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startTelemetry } from './telemetry.ts';

/** An OTLP/HTTP JSON collector in the test: the metric names of every push it received. */
async function startCollector(): Promise<{ url: string; pushes: string[][]; close: () => Promise<void> }> {
  const pushes: string[][] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/metrics') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceMetrics: { scopeMetrics: { metrics: { name: string }[] }[] }[];
        };
        pushes.push(body.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.name))));
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pushes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('metrics pushed over OTLP', () => {
  let collector: Awaited<ReturnType<typeof startCollector>> | undefined;
  afterAll(async () => {
    vi.unstubAllEnvs();
    await collector?.close();
  });

  it('pushes the figures /metrics serves, and once more at shutdown', async () => {
    collector = await startCollector();
    // The exporter reads its endpoint from the process' environment itself, as a deployment sets it.
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', collector.url);
    vi.stubEnv('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/json');
    vi.stubEnv('OTEL_METRIC_EXPORT_INTERVAL', '100');
    const telemetry = await startTelemetry('spec-otlp-metrics', process.env);
    const counter = metrics.getMeter('portcullis').createCounter('spec_pushed_total');
    counter.add(3);
    await expect.poll(() => collector!.pushes.some((names) => names.includes('spec_pushed_total')), { timeout: 10_000 }).toBe(true);
    // The same figure on both outlets: recorded once, read by both.
    expect(await telemetry.prometheusText()).toMatch(/^spec_pushed_total(\{[^}]*\})? 3$/m);
    const before = collector.pushes.length;
    await telemetry.shutdown();
    expect(collector.pushes.length).toBeGreaterThan(before);
  });
});
