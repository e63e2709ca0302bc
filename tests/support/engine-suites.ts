import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'vitest';

/**
 * Engine suites (KurrentDB, Kafka) skip where their engine is not reachable. A skip is printed where it
 * happens, and recorded for the run's end: workers append to a file the global setup made, and the global
 * teardown lists them last, so a CI run that skipped an engine says so in its final lines, never silently.
 */
const RECORD_VARIABLE = 'PORTCULLIS_TEST_SKIPPED_ENGINES';

/** In the global setup: a record for this run, inherited by the workers through the environment. */
export function startSkippedEnginesRecord(): void {
  const directory = mkdtempSync(join(tmpdir(), 'portcullis-engines-'));
  process.env[RECORD_VARIABLE] = join(directory, 'skipped');
}

/** In a suite that skips: prints the notice now and records it for the end of the run. */
export function recordSkippedEngine(suite: string, reason: string, toRun: string): void {
  const line = `${suite}: skipped (${reason}); ${toRun}`;
  console.warn(`[skip] ${line}`);
  const record = process.env[RECORD_VARIABLE];
  if (record) appendFileSync(record, `${line}\n`);
}

/** In the global teardown: the run's skipped engine suites, printed, and the record removed. */
export function reportSkippedEngines(): void {
  const record = process.env[RECORD_VARIABLE];
  if (!record) return;
  let lines: string[] = [];
  try {
    lines = [...new Set(readFileSync(record, 'utf8').split('\n').filter(Boolean))];
  } catch {
    // No suite skipped: nothing was written.
  }
  rmSync(join(record, '..'), { recursive: true, force: true });
  if (lines.length === 0) return;
  console.warn(`\nEngine suites skipped in this run${process.env.CI === 'true' ? ' (CI)' : ''}:\n${lines.map((l) => `  - ${l}`).join('\n')}`);
}

/**
 * `describe` where the suite's engine is reachable; elsewhere the same suite skipped, with the notice printed
 * and recorded (see `recordSkippedEngine`), never silently.
 */
export function describeWithEngine(
  name: string,
  reachable: boolean,
  /** Why it is not, and what would run the suite (`set EVENTSTORE_URL to run it`). */
  unreachable: { readonly reason: string; readonly toRun: string },
  fn: () => void,
): void {
  if (reachable) {
    describe(name, fn);
    return;
  }
  recordSkippedEngine(name, unreachable.reason, unreachable.toRun);
  describe.skip(name, fn);
}
