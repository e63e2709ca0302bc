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
