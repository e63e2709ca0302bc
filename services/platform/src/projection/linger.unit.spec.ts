import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppendSignal } from '../event-store/append-signal.ts';
import { gatherAppendsUnderWay } from './linger.ts';

/** A log as a projector hears it: notices from writers, each saying what its writer still had under way. */
function heardLog() {
  const signal = new AppendSignal();
  let notices = { heard: 0, othersUnderWay: 0 };
  return {
    log: {
      appendGeneration: () => signal.current,
      waitForAppend: (generation: number, timeoutMs: number, abort?: AbortSignal) => signal.wait(generation, timeoutMs, abort),
      appendNotices: () => notices,
    },
    hear: (othersUnderWay: number): void => {
      notices = { heard: notices.heard + 1, othersUnderWay };
      signal.notify();
    },
    /** A wake-up without a notice: this process's own append, before its notice comes back. */
    wakeWithoutNotice: (): void => signal.notify(),
  };
}

/** Runs the gathering, telling whether it has finished yet. */
function gathering(promise: Promise<number>) {
  let result: number | undefined;
  void promise.then((heard) => (result = heard));
  return { result: () => result, done: promise };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('gatherAppendsUnderWay', () => {
  afterEach(() => vi.useRealTimers());

  it('does not wait when the waking append said nothing else was under way (a lone client)', async () => {
    const { log, hear } = heardLog();
    hear(0);
    expect(await gatherAppendsUnderWay(log, 10_000, new AbortController().signal)).toBe(0);
  });

  it('waits for as many appends as were said to be under way, and no longer', async () => {
    const { log, hear, wakeWithoutNotice } = heardLog();
    hear(2);
    const run = gathering(gatherAppendsUnderWay(log, 10_000, new AbortController().signal));
    hear(5);
    wakeWithoutNotice();
    await settle();
    expect(run.result()).toBeUndefined();
    // The second notice's own count does not extend the wait: only the first one's siblings are awaited.
    hear(4);
    expect(await run.done).toBe(2);
  });

  it('gives up once the bound has passed, with what it heard', async () => {
    vi.useFakeTimers();
    const { log, hear } = heardLog();
    hear(3);
    const run = gathering(gatherAppendsUnderWay(log, 50, new AbortController().signal));
    hear(0);
    await vi.advanceTimersByTimeAsync(49);
    expect(run.result()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(await run.done).toBe(1);
  });

  it('ends when woken on purpose (a reader hurrying, the runner stopping), and never waits at 0', async () => {
    const { log, hear } = heardLog();
    hear(3);
    const wake = new AbortController();
    const run = gathering(gatherAppendsUnderWay(log, 10_000, wake.signal));
    await settle();
    expect(run.result()).toBeUndefined();
    wake.abort();
    expect(await run.done).toBe(0);
    expect(await gatherAppendsUnderWay(log, 0, new AbortController().signal)).toBe(0);
  });
});
