import type { FastifyInstance } from 'fastify';
import { telemetryEndpoints as endpoints } from '@portcullis/contracts';
import { registeredInstanceId } from '@portcullis/platform/telemetry/process-registry';
import { startTelemetry } from '@portcullis/platform/telemetry/telemetry';
import type { OpsPorts } from './ports.ts';
import { operatorAccess } from '../http/operator-access.ts';
import { route } from '../http/declared-route.ts';
import { overviewBuilder } from './overview.ts';
import { OverviewSeries } from './overview-series.ts';

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * The api's telemetry for operators: `/metrics` for Prometheus and `/ops/overview` for the console, both
 * from this process' MeterProvider (started here if the server has not: an api built in a test has
 * metrics too). Operators only, like the other ops endpoints: x-api-key, an admin's session, or anyone on
 * an api that listens on loopback alone.
 */
export function telemetryRoutes(ctx: OpsPorts) {
  const authorize = operatorAccess(ctx, { sessions: true, refusal: 'YOU_ARE_NOT_ALLOWED_TO_OPERATE' });

  return async function register(app: FastifyInstance): Promise<void> {
    const telemetry = await startTelemetry('portcullis-api');
    // Every api process writes its minutes beside the others', so the overview is the deployment's.
    const series = new OverviewSeries(telemetry, new Set([`${ctx.config.basePath}/get-session`]), Date.now, { pool: ctx.pool, instanceId: registeredInstanceId });
    series.start();
    app.addHook('onClose', () => series.stop());
    const overview = overviewBuilder(ctx, telemetry, series, registeredInstanceId);

    route(app, endpoints.metrics, async (request, reply) => {
      await authorize(request, reply);
      return reply.header('cache-control', 'no-store').type(PROMETHEUS_TEXT).send(await telemetry.prometheusText());
    });

    route(app, endpoints.opsOverview, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return overview();
    });
  };
}
