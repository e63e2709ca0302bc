import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { instruments, startTelemetry } from '@portcullis/platform/telemetry/telemetry';
import { instrumentsInSource, repositoryRoot } from './deployment-files.ts';

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(path);
    return /\.ts$/.test(entry.name) && !/\.(spec|test-support)\.ts$/.test(entry.name) ? [path] : [];
  });
}

/**
 * The names Prometheus sees for every instrument the services make: each instrument found in their source
 * is made again on this process' own MeterProvider, given a value, and read back through the same exporter
 * the services serve /metrics with, so the suffixes (`_total`, `_bucket`…) are the exporter's, not a guess.
 */
export async function exportedMetricNames(): Promise<Set<string>> {
  const files = new Map(
    ['api', 'projector', 'mailer', 'platform'].flatMap((service) => sourceFiles(join(repositoryRoot, 'services', service, 'src')).map((path) => [path, readFileSync(path, 'utf8')] as const)),
  );
  const found = instrumentsInSource(files);
  if (found.length === 0) throw new Error('no instrument found in the services: the source scan is broken');
  const telemetry = await startTelemetry('deploy-check', {});
  const make = instruments((meter) =>
    found.map((instrument) => {
      const options = instrument.unit === undefined ? {} : { unit: instrument.unit };
      switch (instrument.kind) {
        case 'Counter':
          return () => meter.createCounter(instrument.name, options).add(1);
        case 'UpDownCounter':
          return () => meter.createUpDownCounter(instrument.name, options).add(1);
        case 'Histogram':
          return () => meter.createHistogram(instrument.name, options).record(1);
        case 'Gauge':
          return () => meter.createGauge(instrument.name, options).record(1);
        case 'ObservableGauge':
          return () => meter.createObservableGauge(instrument.name, options).addCallback((result) => result.observe(1));
        case 'ObservableCounter':
          return () => meter.createObservableCounter(instrument.name, options).addCallback((result) => result.observe(1));
        case 'ObservableUpDownCounter':
          return () => meter.createObservableUpDownCounter(instrument.name, options).addCallback((result) => result.observe(1));
      }
    }),
  );
  for (const record of make()) record();
  const text = await telemetry.prometheusText();
  await telemetry.shutdown();
  return new Set(text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).map((line) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]));
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'offset', 'bool', 'inf', 'nan']);

/** The metric names a PromQL expression reads (functions, label names and values left out). */
export function metricNamesIn(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)]
    .filter((m) => !bare.slice(m.index + m[0].length).trimStart().startsWith('('))
    .map((m) => m[0])
    .filter((word) => !PROMQL_WORDS.has(word.toLowerCase()));
}
