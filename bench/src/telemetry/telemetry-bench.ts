import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuthClient, cookieHeader } from '../lib/auth-client.ts';
import { CostMeter } from '../lib/cost-meter.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { runLoad, signInLoad, type LoadFigures, type LoadOptions } from '../lib/load.ts';
import { startDeployment } from '../lib/portcullis.ts';
import { log } from '../lib/progress.ts';
import { deleteKeysWithPrefix, redisReachable } from '../lib/redis-keys.ts';
import { formatRate, markdownTable } from '../lib/report.ts';
import type { Teardown } from '../lib/teardown.ts';
import { settings } from '../settings.ts';

/** What tracing every request may cost, at most, against the same deployment untraced (issue 44). */
const GOAL_MAX_COST = 0.1;
const WARMUP_S = 10;

/**
 * An OTLP/HTTP endpoint in the bench process that takes every export and drops it, as a collector on the
 * same host would: the traced variant pays for making, batching, encoding and sending its spans.
 */
async function startSink(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let bytes = 0;
  const server = http.createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => bytes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface VariantFigures {
  readonly getSession: LoadFigures;
  /** The api's CPU per get-session answered (µs): what tracing costs the server, whatever the load generator beside it gets of the cores. */
  readonly getSessionApiCpuUs: number | null;
  readonly signIn: LoadFigures;
}

/**
 * get-session (cookie) and sign-in with telemetry off (metrics only, as always) and on (fastify, pg and
 * ioredis traced, exported over OTLP/HTTP protobuf to a local sink), every request or one trace in a hundred,
 * on one database, each variant on an api + projector of its own. The variants run in an order and its
 * mirror, so drifting machine load falls on each; each figure is the mean of its two runs.
 */
export async function runTelemetry(teardown: Teardown): Promise<string> {
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop ${database.name}`, () => database.drop());
  const sink = await startSink();
  teardown.add('close the OTLP sink', () => sink.close());
  const withRedis = await redisReachable(settings.redisUrl);
  const keyPrefix = `bench:${randomBytes(4).toString('hex')}:`;
  if (withRedis) teardown.add('delete the Redis keys', () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
  const secret = randomBytes(32).toString('base64url');
  const runId = randomBytes(4).toString('hex');
  const users = Array.from({ length: settings.signInUsers }, (_, i) => ({
    name: `Bench ${i}`,
    email: `bench-telemetry-${i}-${runId}@example.com`,
    password: `bench-password-${runId}-${i}`,
  }));
  let signedUp = false;
  const meter = await CostMeter.open({ adminUrl: settings.adminUrl, databaseName: database.name, redisUrl: null });
  teardown.add('close the cost meter (telemetry)', () => meter.close());

  type Variant = 'off' | 'every request' | 'sampled 1%';
  const otelOf: Record<Variant, Record<`OTEL_${string}`, string> | null> = {
    off: null,
    'every request': { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' },
    // What a busy deployment would run: one trace in a hundred kept, a caller's sampled traceparent honoured.
    'sampled 1%': {
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
    },
  };
  const measure = async (variant: Variant): Promise<VariantFigures> => {
    const label = `telemetry ${variant}`;
    const otel = otelOf[variant];
    log(`starting api + projector, ${label}`);
    const deployment = await startDeployment({
      databaseUrl: database.url,
      secret,
      redis: withRedis ? { url: settings.redisUrl, keyPrefix } : null,
      rateLimit: settings.rateLimit,
      ...(otel ? { otel } : {}),
    });
    try {
      const client = new AuthClient(deployment.authUrl);
      if (!signedUp) for (const user of users) await client.signUp(user);
      signedUp = true;
      const { signedToken } = await client.signIn(users[0]!);
      const getSession: LoadOptions = {
        url: `${deployment.authUrl}/get-session`,
        headers: cookieHeader(signedToken),
        connections: settings.connections,
        durationS: settings.durationS,
      };
      const signIn = signInLoad(deployment.baseUrl, users, { connections: settings.signInConnections, durationS: settings.durationS });
      log(`get-session and sign-in, ${label}: ${WARMUP_S} s warm-up each, then ${settings.durationS} s`);
      await runLoad({ ...getSession, durationS: WARMUP_S });
      const { result: sessionFigures, cost } = await meter.measure({ pids: [deployment.api.pid], backends: false, redis: false }, () => runLoad(getSession));
      await runLoad({ ...signIn, durationS: WARMUP_S });
      const signInFigures = await runLoad(signIn);
      return { getSession: sessionFigures, getSessionApiCpuUs: cost.cpuMsPerOp === null ? null : cost.cpuMsPerOp * 1000, signIn: signInFigures };
    } finally {
      await deployment.stop();
    }
  };

  const received = sink.received();
  const order: Variant[] = ['off', 'every request', 'sampled 1%', 'sampled 1%', 'every request', 'off'];
  const runs: { variant: Variant; figures: VariantFigures }[] = [];
  for (const variant of order) runs.push({ variant, figures: await measure(variant) });
  const spansSent = sink.received() > received;
  const mean = (variant: Variant, figure: (figures: VariantFigures) => number | null): number | null => {
    const values = runs.filter((run) => run.variant === variant).map((run) => figure(run.figures));
    if (values.some((value) => value === null)) return null;
    return (values as number[]).reduce((sum, value) => sum + value, 0) / values.length;
  };
  const rows = (['getSession', 'signIn'] as const).flatMap((key) => {
    const offRate = mean('off', (figures) => figures[key].requestsPerSecond)!;
    return (['every request', 'sampled 1%'] as const).map((variant) => {
      const onRate = mean(variant, (figures) => figures[key].requestsPerSecond)!;
      const cost = 1 - onRate / offRate;
      const failed = runs.reduce((sum, run) => sum + run.figures[key].failed, 0);
      return [
        `${key === 'getSession' ? 'get-session (cookie)' : 'sign-in'}, ${variant}`,
        formatRate(offRate),
        formatRate(onRate),
        `${(cost * 100).toFixed(1)}%`,
        `${cost < GOAL_MAX_COST ? 'PASS' : 'MISS'} (< ${GOAL_MAX_COST * 100}%)`,
        String(failed),
      ];
    });
  });
  // Throughput here is shared with the load generator on the same cores, so the api's own CPU per answer is
  // the steadier figure of what tracing costs the server.
  const offCpu = mean('off', (figures) => figures.getSessionApiCpuUs);
  const cpuRows = offCpu === null ? [] : (['every request', 'sampled 1%'] as const).map((variant) => {
    const onCpu = mean(variant, (figures) => figures.getSessionApiCpuUs)!;
    const cost = onCpu / offCpu - 1;
    return [`get-session (cookie), ${variant}`, offCpu.toFixed(1), onCpu.toFixed(1), `${(cost * 100).toFixed(1)}%`, `${cost < GOAL_MAX_COST ? 'PASS' : 'MISS'} (< ${GOAL_MAX_COST * 100}%)`];
  });
  return [
    `## telemetry: tracing (OTLP/HTTP to a local sink), every request or 1% sampled, against metrics only${withRedis ? ', with Redis' : ', without Redis'}`,
    '',
    markdownTable(['scenario', 'off ops/s', 'on ops/s', 'cost', 'goal', 'failed'], rows, new Set([1, 2, 3, 5])),
    '',
    ...(cpuRows.length > 0 ? [markdownTable(['scenario', 'off api CPU µs/answer', 'on api CPU µs/answer', 'cost', 'goal'], cpuRows, new Set([1, 2, 3])), ''] : []),
    spansSent ? 'Spans reached the sink in the traced runs.' : 'MISS: no span reached the sink in the traced runs.',
  ].join('\n');
}
