import { describe, expect, it } from 'vitest';
import { instruments, startTelemetry } from '@portcullis/platform/telemetry/telemetry';
import { parsePrometheusText } from '@portcullis/platform/telemetry/prometheus-text';
import { HTTP_DURATION_METRIC, SIGN_IN_METRIC } from './http-metrics.ts';
import { OverviewSeries, quantileMs } from './overview-series.ts';

describe('quantileMs', () => {
  it('interpolates within the bucket the rank falls in, in milliseconds', () => {
    // 100 observations: 90 under 1 ms, 10 between 1 and 5 ms.
    expect(quantileMs([90, 10, 0], [0.001, 0.005], 0.5)).toBeCloseTo((50 / 90) * 1, 5);
    expect(quantileMs([90, 10, 0], [0.001, 0.005], 0.99)).toBeCloseTo(1 + 4 * (9 / 10), 5);
  });

  it('answers null without observations, and the last boundary above it', () => {
    expect(quantileMs([0, 0, 0], [0.001, 0.005], 0.99)).toBeNull();
    expect(quantileMs([0, 0, 3], [0.001, 0.005], 0.99)).toBe(5);
  });
});

describe('OverviewSeries', () => {
  it('puts what moved between samples in the minute it moved in, from the same instruments Prometheus reads', async () => {
    const telemetry = await startTelemetry('portcullis-api-spec');
    const made = instruments((meter) => ({
      signIns: meter.createCounter(SIGN_IN_METRIC),
      duration: meter.createHistogram(HTTP_DURATION_METRIC, { unit: 's', advice: { explicitBucketBoundaries: [0.001, 0.01] } }),
    }))();
    let now = Date.parse('2026-11-28T12:00:30Z');
    const series = new OverviewSeries(telemetry, new Set(['/api/auth/get-session']), () => now);
    // The first sample is the baseline: what was counted before the process sampled is in no minute.
    made.signIns.add(5, { method: 'email', outcome: 'success' });
    await series.series();

    made.signIns.add(2, { method: 'email', outcome: 'success' });
    made.signIns.add(1, { method: 'email', outcome: 'locked' });
    made.duration.record(0.0005, { 'http.route': '/api/auth/get-session' });
    made.duration.record(0.002, { 'http.route': '/api/auth/get-session' });
    made.duration.record(0.5, { 'http.route': '/api/auth/sign-in/email' });
    now += 60_000;
    made.signIns.add(3, { method: 'username', outcome: 'failure' });
    const answer = await series.series();

    expect(answer.minutes).toHaveLength(60);
    expect(answer.minutes.at(-1)).toBe('2026-11-28T12:01:00.000Z');
    // Everything since the baseline lands in the minute it was sampled in (12:01 here).
    expect(answer.signIns.success.at(-1)).toBe(2);
    expect(answer.signIns.locked.at(-1)).toBe(1);
    expect(answer.signIns.failure.at(-1)).toBe(3);
    expect(answer.signIns.success.slice(0, -1).every((n) => n === 0)).toBe(true);
    expect(answer.getSession.requests.at(-1)).toBe(2);
    expect(answer.getSession.p99Ms.at(-1)).toBeGreaterThan(1);
    expect(answer.getSession.p99Ms.at(-2)).toBeNull();

    const text = parsePrometheusText(await telemetry.prometheusText());
    expect(text.filter((s) => s.name === 'portcullis_sign_ins_total').reduce((sum, s) => sum + s.value, 0)).toBe(11);
    series.stop();
    await telemetry.shutdown();
  });
});
