import type { ReadAllOptions, RecordedEvent, SubscribeOptions, Subscription } from './event-store.ts';
/**
 * A wake-up signal for followers of the log. The generation counter closes the gap between "read found
 * nothing" and "start waiting": a follower that saw generation g returns at once if an append came after g.
 */
export class AppendSignal {
  private generation = 0;
  private waiters = new Set<() => void>();

  get current(): number {
    return this.generation;
  }

  notify(): void {
    this.generation += 1;
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  wait(seenGeneration: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.generation !== seenGeneration || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(finish);
        signal?.removeEventListener('abort', finish);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.waiters.add(finish);
      signal?.addEventListener('abort', finish, { once: true });
    });
  }
}

/**
 * Follows the log as every adapter does: each batch a read of committed events after a checkpoint (so a
 * restart resumes from any position), woken by the signal, or after a second when no append was heard.
 */
export function followBySignal(
  signal: AppendSignal,
  readAll: (options: ReadAllOptions) => Promise<readonly RecordedEvent[]>,
  options: SubscribeOptions,
): Subscription {
  const controller = new AbortController();
  const batchSize = options.batchSize ?? 500;
  const run = async (): Promise<void> => {
    let after = options.after;
    while (!controller.signal.aborted) {
      const generation = signal.current;
      const events = await readAll({ after, limit: batchSize });
      if (events.length > 0) {
        await options.onEvents(events);
        after = events[events.length - 1]!.position;
        continue;
      }
      await signal.wait(generation, 1000, controller.signal);
    }
  };
  const done = run();
  return {
    done,
    stop: async () => {
      controller.abort();
      await done.catch(() => {});
    },
  };
}
