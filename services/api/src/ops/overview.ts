import os from 'node:os';
import { OVERVIEW_MINUTES, type OpsOverview, type RegisteredProcessView } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import { parsePrometheusText, scrapePrometheus, type PrometheusSample } from '@portcullis/platform/telemetry/prometheus-text';
import type { Telemetry } from '@portcullis/platform/telemetry/telemetry';
import { registeredProcesses } from '@portcullis/platform/telemetry/process-registry';
import type { OpsPorts } from './ports.ts';
import type { OverviewSeries } from './overview-series.ts';
import { secondsWaitingAfterEach } from './unapplied-age.ts';

/** Another process' /metrics gets this long; a process that does not answer in time shows without figures. */
const SCRAPE_TIMEOUT_MS = 1500;
/** Counting live sessions scans their index: once in this long is plenty for a chart. */
const ACTIVE_SESSIONS_TTL_MS = 10_000;

interface ProjectionRow {
  readonly name: string;
  readonly position: number;
  readonly oldest_unprojected_seconds: number | null;
}

interface MailRow {
  readonly pending: number;
  readonly sent: number;
  readonly dead: number;
  readonly oldest_seconds: number | null;
}

interface MailMinuteRow {
  readonly minute: number;
  readonly queued: number;
  readonly sent: number;
  readonly dead: number;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ok: true; value: T; latencyMs: number } | { ok: false; detail: string; latencyMs: number }> {
  const started = performance.now();
  try {
    const value = await work();
    return { ok: true, value, latencyMs: performance.now() - started };
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error), latencyMs: performance.now() - started };
  }
}

function sampleValue(samples: readonly PrometheusSample[] | null, name: string, labels: Record<string, string> = {}): number | null {
  const found = samples?.find((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value));
  return found ? found.value : null;
}

/**
 * The ops console's overview: every api process' series of the last hour summed, live sessions, each projection's
 * lag (from the projector holding it, through the metrics URL it registered, else from its stored
 * checkpoint), the delivery log's state, and the health of Postgres, Redis and every registered process.
 */
export function overviewBuilder(ctx: OpsPorts, telemetry: Telemetry, series: OverviewSeries, instanceId: () => string | null) {
  let activeSessions: { readonly count: number; readonly at: number } | null = null;

  async function countActiveSessions(): Promise<number> {
    if (activeSessions && Date.now() - activeSessions.at < ACTIVE_SESSIONS_TTL_MS) return activeSessions.count;
    const count = Number(await ctx.pool.oneFirst(sql.unsafe`SELECT count(*) FROM session WHERE "expiresAt" > now()`));
    activeSessions = { count, at: Date.now() };
    return count;
  }

  /** Each stored checkpoint with how long the event after it has waited (from the log, through the port). */
  async function storedCheckpoints(head: number): Promise<readonly ProjectionRow[]> {
    const rows = (await ctx.pool.any(sql.unsafe`SELECT name, position FROM projection_checkpoints ORDER BY name`)) as readonly { name: string; position: number | string }[];
    const waiting = await secondsWaitingAfterEach(ctx.store, rows.map((row) => Number(row.position)), head).catch(() => new Map<number, number>());
    return rows.map((row) => ({ name: row.name, position: Number(row.position), oldest_unprojected_seconds: waiting.get(Number(row.position)) ?? null }));
  }

  return async function overview(): Promise<OpsOverview> {
    const [minuteSeries, postgres, logHead, redis, processes] = await Promise.all([
      series.series(),
      timed(() => ctx.pool.oneFirst(sql.unsafe`SELECT 1`)),
      // Where the log is away, every projection shows as caught up to nothing rather than the page failing.
      ctx.store.headPosition().catch(() => 0),
      ctx.cache ? timed(() => ctx.cache!.redis.ping()) : Promise.resolve(null),
      registeredProcesses(ctx.pool).catch(() => []),
    ]);
    const head = postgres.ok ? logHead : 0;
    const self = instanceId();
    // This process reads its own figures; other api processes' /metrics want the server key, when there is one.
    const apiKey = ctx.config.serverApiKey;
    const scraped = await Promise.all(
      processes.map((process) => {
        if (process.instanceId === self) return telemetry.prometheusText().then(parsePrometheusText, () => null);
        if (!process.up || !process.metricsUrl) return Promise.resolve(null);
        if (process.service !== 'api') return scrapePrometheus(process.metricsUrl, SCRAPE_TIMEOUT_MS);
        return apiKey ? scrapePrometheus(process.metricsUrl, SCRAPE_TIMEOUT_MS, { 'x-api-key': apiKey }) : Promise.resolve(null);
      }),
    );

    const [projectionRows, mail, mailMinutes, sessions] = postgres.ok
      ? await Promise.all([
          storedCheckpoints(head),
          ctx.pool.one(sql.unsafe`
            SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'sent')::int AS sent,
                   count(*) FILTER (WHERE status = 'dead')::int AS dead,
                   extract(epoch FROM now() - min(received_at) FILTER (WHERE status = 'pending'))::float8 AS oldest_seconds
            FROM mail_delivery`) as Promise<MailRow>,
          ctx.pool.any(sql.unsafe`
            WITH moments AS (
              SELECT received_at AS at, 'queued' AS what FROM mail_delivery WHERE received_at >= date_trunc('minute', now()) - make_interval(mins => ${OVERVIEW_MINUTES - 1})
              UNION ALL SELECT sent_at, 'sent' FROM mail_delivery WHERE sent_at >= date_trunc('minute', now()) - make_interval(mins => ${OVERVIEW_MINUTES - 1})
              UNION ALL SELECT dead_at, 'dead' FROM mail_delivery WHERE dead_at >= date_trunc('minute', now()) - make_interval(mins => ${OVERVIEW_MINUTES - 1})
            )
            SELECT (extract(epoch FROM date_trunc('minute', at)) * 1000)::float8 AS minute,
                   count(*) FILTER (WHERE what = 'queued')::int AS queued, count(*) FILTER (WHERE what = 'sent')::int AS sent,
                   count(*) FILTER (WHERE what = 'dead')::int AS dead
            FROM moments GROUP BY 1`) as Promise<readonly MailMinuteRow[]>,
          countActiveSessions(),
        ])
      : [[], { pending: 0, sent: 0, dead: 0, oldest_seconds: null }, [], 0];

    const projectorFigures = processes.map((process, i) => ({ process, samples: scraped[i] ?? null })).filter((p) => p.process.service === 'projector' && p.process.up);
    const names = new Set([...projectionRows.map((row) => row.name), ...projectorFigures.flatMap((p) => p.process.projections)]);
    const projections = [...names].sort().map((name) => {
      const holder = projectorFigures.find((p) => p.process.projections.includes(name)) ?? null;
      const row = projectionRows.find((r) => r.name === name);
      const live = sampleValue(holder?.samples ?? null, 'portcullis_projection_checkpoint', { projection: name });
      const checkpoint = live ?? (row ? Number(row.position) : null);
      const liveSeconds = sampleValue(holder?.samples ?? null, 'portcullis_projection_lag_seconds', { projection: name });
      return {
        name,
        checkpoint,
        head,
        lag: checkpoint === null ? null : Math.max(0, head - checkpoint),
        lagSeconds: liveSeconds ?? row?.oldest_unprojected_seconds ?? (checkpoint !== null && checkpoint >= head ? 0 : null),
        holder: holder?.process.instanceId ?? null,
      };
    });

    const byMinute = new Map(mailMinutes.map((row) => [new Date(row.minute).toISOString(), row]));
    const mailColumn = (key: 'queued' | 'sent' | 'dead'): number[] => minuteSeries.minutes.map((minute) => byMinute.get(minute)?.[key] ?? 0);
    const processViews: RegisteredProcessView[] = processes.map((process, i) => ({
      instanceId: process.instanceId,
      service: process.service,
      host: process.host,
      pid: process.pid,
      startedAt: process.startedAt.toISOString(),
      seenAt: process.seenAt.toISOString(),
      up: process.up,
      metricsUrl: process.metricsUrl,
      projections: [...process.projections],
      eventLoopDelayP99Ms: sampleValue(scraped[i] ?? null, 'portcullis_event_loop_delay', { stat: 'p99' }),
    }));

    return {
      generatedAt: new Date().toISOString(),
      answeredBy: { instanceId: self, host: os.hostname(), pid: process.pid },
      series: { ...minuteSeries, mail: { queued: mailColumn('queued'), sent: mailColumn('sent'), dead: mailColumn('dead') } },
      activeSessions: sessions,
      projections,
      mail: { pending: mail.pending, sent: mail.sent, dead: mail.dead, oldestUnsentSeconds: mail.oldest_seconds },
      health: {
        postgres: postgres.ok ? { ok: true, latencyMs: postgres.latencyMs } : { ok: false, detail: postgres.detail, latencyMs: postgres.latencyMs },
        redis: redis === null ? null : redis.ok ? { ok: true, latencyMs: redis.latencyMs } : { ok: false, detail: redis.detail, latencyMs: redis.latencyMs },
        processes: processViews,
      },
    };
  };
}
