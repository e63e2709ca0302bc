import { randomUUID } from 'node:crypto';
import { OVERVIEW_MINUTES } from '@portcullis/contracts';
import { sql, type DatabasePool } from '@portcullis/platform';
import { DataPointType, type ResourceMetrics, type Telemetry } from '@portcullis/platform/telemetry/telemetry';
import { HTTP_DURATION_METRIC, REFUSAL_METRIC, SIGN_IN_METRIC } from './http-metrics.ts';
import { SIGN_UP_METRIC } from '../identity/sign-up-count.ts';

const SAMPLE_EVERY_MS = 10_000;
const MINUTE_MS = 60_000;

/** The cumulative figures the series are made of, as one sample reads them. */
interface Figures {
  signInSuccess: number;
  signInFailure: number;
  signInLocked: number;
  signUps: number;
  rateLimited: number;
  captchaRefused: number;
  getSessions: number;
  /** get-session's latency histogram: bucket counts (the last is above every boundary). */
  getSessionBuckets: number[];
}

type Counted = Exclude<keyof Figures, 'getSessionBuckets'>;
const COUNTED: readonly Counted[] = ['signInSuccess', 'signInFailure', 'signInLocked', 'signUps', 'rateLimited', 'captchaRefused', 'getSessions'];

function emptyFigures(): Figures {
  return { signInSuccess: 0, signInFailure: 0, signInLocked: 0, signUps: 0, rateLimited: 0, captchaRefused: 0, getSessions: 0, getSessionBuckets: [] };
}

export interface MinuteSeries {
  readonly minutes: string[];
  readonly signIns: { success: number[]; failure: number[]; locked: number[] };
  readonly signUps: number[];
  readonly getSession: { requests: number[]; p99Ms: (number | null)[] };
  readonly rateLimited: number[];
  readonly captchaRefused: number[];
}

/** Where every api process puts its minutes, so any of them answers for all. */
export interface SharedMinutes {
  readonly pool: DatabasePool;
  /** The registry's id of this process, when it registered (a test's api has none: it gets one of its own). */
  readonly instanceId: () => string | null;
}

interface MinuteRow {
  readonly minute: number;
  readonly sign_in_success: number;
  readonly sign_in_failure: number;
  readonly sign_in_locked: number;
  readonly sign_ups: number;
  readonly rate_limited: number;
  readonly captcha_refused: number;
  readonly get_sessions: number;
  readonly get_session_buckets: readonly number[];
  readonly bucket_boundaries: readonly number[];
}

/**
 * Per-minute series of the last hour, sampled from this process' own MeterProvider (the instruments
 * Prometheus reads): every few seconds the cumulative figures are read, and what moved since the previous
 * sample is added to the minute it moved in. With `shared`, each sample also writes this process' minutes
 * to Postgres and the series are every api process' summed (counts add; latency histograms add bucket by
 * bucket, so the p99 is the deployment's, not an average of the processes').
 */
export class OverviewSeries {
  private previous: Figures | null = null;
  private boundaries: number[] = [];
  private readonly minutes = new Map<number, Figures>();
  /** Minutes moved since they were last written. */
  private readonly unwritten = new Set<number>();
  private readonly ownId = `api-${randomUUID()}`;
  private samples = 0;
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<void> = Promise.resolve();

  constructor(
    private readonly telemetry: Telemetry,
    private readonly getSessionRoutes: ReadonlySet<string>,
    private readonly now: () => number = Date.now,
    private readonly shared: SharedMinutes | null = null,
  ) {}

  start(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Reads the figures now, so the minute under way is up to date, and answers the last hour. */
  async series(): Promise<MinuteSeries> {
    await this.sample();
    const current = Math.floor(this.now() / MINUTE_MS);
    const starts = Array.from({ length: OVERVIEW_MINUTES }, (_, i) => current - OVERVIEW_MINUTES + 1 + i);
    const minutes = this.shared ? await this.everyProcessMinutes(starts[0]!) : this.minutes;
    const of = (minute: number): Figures => minutes.get(minute) ?? emptyFigures();
    const column = (key: Counted): number[] => starts.map((minute) => of(minute)[key]);
    return {
      minutes: starts.map((minute) => new Date(minute * MINUTE_MS).toISOString()),
      signIns: { success: column('signInSuccess'), failure: column('signInFailure'), locked: column('signInLocked') },
      signUps: column('signUps'),
      getSession: { requests: column('getSessions'), p99Ms: starts.map((minute) => quantileMs(of(minute).getSessionBuckets, this.boundaries, 0.99)) },
      rateLimited: column('rateLimited'),
      captchaRefused: column('captchaRefused'),
    };
  }

  private sample(): Promise<void> {
    // One at a time: two overlapping samples would count the same movement twice.
    this.sampling = this.sampling.then(async () => {
      const figures = this.read(await this.telemetry.collect());
      const minute = Math.floor(this.now() / MINUTE_MS);
      if (this.previous) {
        const into = this.minutes.get(minute) ?? emptyFigures();
        for (const key of COUNTED) into[key] += Math.max(0, figures[key] - this.previous[key]);
        into.getSessionBuckets = figures.getSessionBuckets.map((count, i) => (into.getSessionBuckets[i] ?? 0) + Math.max(0, count - (this.previous!.getSessionBuckets[i] ?? 0)));
        this.minutes.set(minute, into);
        this.unwritten.add(minute);
      }
      this.previous = figures;
      for (const kept of this.minutes.keys()) if (kept <= minute - OVERVIEW_MINUTES) this.minutes.delete(kept);
      if (this.shared) await this.write(this.shared.pool);
    }).catch(() => {});
    return this.sampling;
  }

  /** This process' moved minutes, as absolute figures (a write repeated after a failure changes nothing). */
  private async write(pool: DatabasePool): Promise<void> {
    const instanceId = this.shared?.instanceId() ?? this.ownId;
    for (const minute of [...this.unwritten]) {
      const figures = this.minutes.get(minute);
      this.unwritten.delete(minute);
      if (!figures) continue;
      await pool.query(sql.unsafe`
        INSERT INTO api_minute_figures (minute, instance_id, sign_in_success, sign_in_failure, sign_in_locked, sign_ups, rate_limited,
                                        captcha_refused, get_sessions, get_session_buckets, bucket_boundaries)
        VALUES (to_timestamp(${(minute * MINUTE_MS) / 1000}), ${instanceId}, ${figures.signInSuccess}, ${figures.signInFailure}, ${figures.signInLocked},
                ${figures.signUps}, ${figures.rateLimited}, ${figures.captchaRefused}, ${figures.getSessions},
                ${sql.array(figures.getSessionBuckets, 'int8')}, ${sql.array(this.boundaries, 'float8')})
        ON CONFLICT (minute, instance_id) DO UPDATE SET
          sign_in_success = EXCLUDED.sign_in_success, sign_in_failure = EXCLUDED.sign_in_failure, sign_in_locked = EXCLUDED.sign_in_locked,
          sign_ups = EXCLUDED.sign_ups, rate_limited = EXCLUDED.rate_limited, captcha_refused = EXCLUDED.captcha_refused,
          get_sessions = EXCLUDED.get_sessions, get_session_buckets = EXCLUDED.get_session_buckets, bucket_boundaries = EXCLUDED.bucket_boundaries`).catch(
        (error: unknown) => {
          this.unwritten.add(minute);
          throw error;
        },
      );
    }
    // Sweeping is rare work: once in a few dozen samples, by whichever process samples.
    if (this.samples++ % 30 === 0) {
      await pool.query(sql.unsafe`DELETE FROM api_minute_figures WHERE minute < now() - make_interval(mins => ${OVERVIEW_MINUTES * 2})`);
    }
  }

  /** Every api process' minutes from `from` on, summed. */
  private async everyProcessMinutes(from: number): Promise<Map<number, Figures>> {
    const rows = (await this.shared!.pool.any(sql.unsafe`
      SELECT (extract(epoch FROM minute) * 1000)::float8 AS minute, sign_in_success, sign_in_failure, sign_in_locked, sign_ups, rate_limited,
             captcha_refused, get_sessions, get_session_buckets, bucket_boundaries
      FROM api_minute_figures WHERE minute >= to_timestamp(${(from * MINUTE_MS) / 1000})`)) as readonly MinuteRow[];
    const summed = new Map<number, Figures>();
    for (const row of rows) {
      const minute = Math.round(row.minute / MINUTE_MS);
      const into = summed.get(minute) ?? emptyFigures();
      into.signInSuccess += Number(row.sign_in_success);
      into.signInFailure += Number(row.sign_in_failure);
      into.signInLocked += Number(row.sign_in_locked);
      into.signUps += Number(row.sign_ups);
      into.rateLimited += Number(row.rate_limited);
      into.captchaRefused += Number(row.captcha_refused);
      into.getSessions += Number(row.get_sessions);
      // Every process has the same instrument, hence the same boundaries.
      row.get_session_buckets.forEach((count, i) => (into.getSessionBuckets[i] = (into.getSessionBuckets[i] ?? 0) + Number(count)));
      if (this.boundaries.length === 0 && row.bucket_boundaries.length > 0) this.boundaries = [...row.bucket_boundaries];
      summed.set(minute, into);
    }
    return summed;
  }

  private read(collected: ResourceMetrics): Figures {
    const figures = emptyFigures();
    for (const scope of collected.scopeMetrics) {
      for (const metric of scope.metrics) {
        const name = metric.descriptor.name;
        if (metric.dataPointType === DataPointType.SUM && name === SIGN_IN_METRIC) {
          for (const point of metric.dataPoints) {
            const outcome = point.attributes.outcome;
            if (outcome === 'success') figures.signInSuccess += point.value;
            else if (outcome === 'failure') figures.signInFailure += point.value;
            else if (outcome === 'locked') figures.signInLocked += point.value;
          }
        } else if (metric.dataPointType === DataPointType.SUM && name === SIGN_UP_METRIC) {
          for (const point of metric.dataPoints) figures.signUps += point.value;
        } else if (metric.dataPointType === DataPointType.SUM && name === REFUSAL_METRIC) {
          for (const point of metric.dataPoints) {
            if (point.attributes.reason === 'rate_limit') figures.rateLimited += point.value;
            else if (point.attributes.reason === 'captcha') figures.captchaRefused += point.value;
          }
        } else if (metric.dataPointType === DataPointType.HISTOGRAM && name === HTTP_DURATION_METRIC) {
          for (const point of metric.dataPoints) {
            if (!this.getSessionRoutes.has(String(point.attributes['http.route']))) continue;
            figures.getSessions += point.value.count;
            this.boundaries = point.value.buckets.boundaries;
            point.value.buckets.counts.forEach((count, i) => (figures.getSessionBuckets[i] = (figures.getSessionBuckets[i] ?? 0) + count));
          }
        }
      }
    }
    return figures;
  }
}

/**
 * A quantile from histogram bucket counts, in milliseconds: linear within the bucket it falls in (as
 * Prometheus' histogram_quantile does); the bucket above the last boundary answers that boundary.
 */
export function quantileMs(counts: readonly number[], boundaries: readonly number[], quantile: number): number | null {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = quantile * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i += 1) {
    const count = counts[i]!;
    if (seen + count >= rank && count > 0) {
      if (i >= boundaries.length) return boundaries[boundaries.length - 1]! * 1000;
      const lower = i === 0 ? 0 : boundaries[i - 1]!;
      const upper = boundaries[i]!;
      return (lower + ((upper - lower) * (rank - seen)) / count) * 1000;
    }
    seen += count;
  }
  return boundaries[boundaries.length - 1]! * 1000;
}
