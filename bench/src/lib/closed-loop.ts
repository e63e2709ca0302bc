/**
 * A closed-loop load generator: each client sends its next operation as soon as its previous one is
 * answered, as a user of the api does. autocannon drives a fixed request; these operations carry per-client
 * state (a cookie jar, the organization to toggle to, the invitation just made) and can be several requests
 * long. Latencies are kept exactly (milliseconds, not a histogram's whole buckets).
 */

export interface StepTiming {
  readonly step: string;
  readonly ms: number;
}

export interface Outcome {
  readonly ok: boolean;
  /** The HTTP status that decided the outcome ('200', '409'), or 'error' for no answer. */
  readonly status: string;
  /** Each request's latency, for operations of several requests. */
  readonly steps?: readonly StepTiming[];
}

/** One client's next operation; 'exhausted' once the work prepared for it has run out. */
export type Operation = () => Promise<Outcome | 'exhausted'>;

export interface Percentiles {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface LoopFigures {
  readonly clients: number;
  /** The measured window: the duration asked for, or less when a client ran out of prepared work. */
  readonly windowS: number;
  /** The window stayed open past the duration, for `atLeast`. */
  readonly extended: boolean;
  readonly cutShort: boolean;
  /** Successful operations completed in the window, per second. */
  readonly opsPerSecond: number;
  readonly ok: number;
  /** Successful operations over the whole run, warm-up and stragglers included. */
  readonly okOverall: number;
  readonly failed: number;
  readonly statuses: Readonly<Record<string, number>>;
  /** Of the successful operations completed in the window. */
  readonly latency: Percentiles;
  readonly steps: ReadonlyMap<string, Percentiles>;
  /** The first operation's latency, before anything was warm (the first client's, whatever its outcome). */
  readonly firstMs: number;
  readonly firstError?: string;
}

export interface LoopOptions {
  readonly operations: readonly Operation[];
  readonly warmupS: number;
  readonly durationS: number;
  /** Called when the measured window opens and when it closes (for a cost meter), without being awaited. */
  readonly window?: { opened(): void; closed(): void };
  /**
   * Operations so slow that the window could end with none completed: it stays open past `durationS` until
   * this many have completed in it, or until `longestS` after the start, whichever comes first.
   */
  readonly atLeast?: { readonly operations: number; readonly longestS: number };
}

/** Failed operations with their statuses: `0`, or `12 (409×10, 500×2)`. */
export function describeFailures(figures: LoopFigures): string {
  if (figures.failed === 0) return '0';
  const codes = Object.entries(figures.statuses)
    .filter(([status]) => !/^2\d\d$/.test(status))
    .map(([status, count]) => `${status}×${count}`);
  return `${figures.failed} (${codes.join(', ')})`;
}

/** Nearest-rank percentiles of `values` (unsorted); NaN for none. */
export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number): number => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
  return { count: sorted.length, p50Ms: rank(0.5), p99Ms: rank(0.99), maxMs: sorted.at(-1) ?? Number.NaN };
}

export async function runClosedLoop(options: LoopOptions): Promise<LoopFigures> {
  const started = performance.now();
  const opensAt = started + options.warmupS * 1000;
  let closesAt = opensAt + options.durationS * 1000;
  let windowOpen = false;
  let windowClosed = false;
  let cutShort = false;
  const open = (): void => {
    if (windowOpen) return;
    windowOpen = true;
    options.window?.opened();
  };
  const close = (): void => {
    if (windowClosed) return;
    windowClosed = true;
    open();
    options.window?.closed();
  };
  const latencies: number[] = [];
  const stepLatencies = new Map<string, number[]>();
  const statuses: Record<string, number> = {};
  let ok = 0;
  let okOverall = 0;
  let failed = 0;
  let firstMs = Number.NaN;
  let firstError: string | undefined;
  let exhaustedInWarmup = false;

  const atLeast = options.atLeast;
  const cap = atLeast ? Math.max(closesAt, started + atLeast.longestS * 1000) : closesAt;
  let extended = false;
  const openTimer = setTimeout(open, Math.max(0, opensAt - performance.now()));
  let closeTimer: NodeJS.Timeout;
  const closeOnTime = (): void => {
    if (atLeast && ok + failed < atLeast.operations && performance.now() < cap) {
      // Too few completed yet: keep measuring, up to the cap.
      extended = true;
      closesAt = cap;
      closeTimer = setTimeout(close, Math.max(0, cap - performance.now()));
      return;
    }
    close();
  };
  closeTimer = setTimeout(closeOnTime, Math.max(0, closesAt - performance.now()));

  const client = async (operation: Operation, index: number): Promise<void> => {
    let first = index === 0;
    while (performance.now() < closesAt) {
      const sent = performance.now();
      let outcome: Outcome | 'exhausted';
      try {
        outcome = await operation();
      } catch (error) {
        firstError ??= error instanceof Error ? error.message : String(error);
        outcome = { ok: false, status: 'error' };
      }
      const answered = performance.now();
      if (outcome === 'exhausted') {
        if (answered < opensAt) exhaustedInWarmup = true;
        // The others would run on with fewer clients than asked for: the window ends here.
        if (answered < closesAt) {
          closesAt = Math.max(opensAt, answered);
          cutShort = true;
          clearTimeout(closeTimer);
          closeTimer = setTimeout(close, 0);
        }
        return;
      }
      if (first) {
        firstMs = answered - sent;
        first = false;
      }
      if (outcome.ok) okOverall += 1;
      // An operation sent in the warm-up is warm-up, however late it is answered (a first fold of a long
      // stream would otherwise land in the window).
      if (sent < opensAt || answered > closesAt) continue;
      statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
      if (outcome.ok) {
        ok += 1;
        latencies.push(answered - sent);
      } else {
        failed += 1;
      }
      if (extended && atLeast && ok + failed >= atLeast.operations && !windowClosed) {
        closesAt = answered;
        clearTimeout(closeTimer);
        close();
      }
      if (!outcome.ok) continue;
      for (const step of outcome.steps ?? []) {
        let list = stepLatencies.get(step.step);
        if (!list) stepLatencies.set(step.step, (list = []));
        list.push(step.ms);
      }
    }
  };
  await Promise.all(options.operations.map(client));
  clearTimeout(openTimer);
  clearTimeout(closeTimer);
  close();
  if (exhaustedInWarmup) throw new Error('a client ran out of prepared work during the warm-up: prepare more');
  const windowS = Math.max(0.001, (closesAt - opensAt) / 1000);
  return {
    clients: options.operations.length,
    windowS,
    extended,
    cutShort,
    opsPerSecond: ok / windowS,
    ok,
    okOverall,
    failed,
    statuses,
    latency: percentiles(latencies),
    steps: new Map([...stepLatencies].map(([step, values]) => [step, percentiles(values)])),
    firstMs,
    ...(firstError === undefined ? {} : { firstError }),
  };
}
