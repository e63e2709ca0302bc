/**
 * Runs tasks one at a time per key, in arrival order, and tasks of different keys side by side. A task with
 * several keys waits for each of them, taken in sorted order so that two tasks can never wait on each other.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const unique = [...new Set(keys)].sort();
    if (unique.length === 0) return task();
    const releases: Array<() => void> = [];
    try {
      for (const key of unique) releases.push(await this.acquire(key));
      return await task();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  /** Keys with a task running or waiting: for tests and gauges. */
  get size(): number {
    return this.tails.size;
  }

  private async acquire(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.tails.set(key, tail);
    await previous;
    return () => {
      release();
      // The last in line leaves no entry behind, so idle keys cost nothing.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
