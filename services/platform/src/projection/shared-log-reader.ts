import type { AppendNotices, EventStore, ReadAllOptions, RecordedEvent } from '../event-store/event-store.ts';

/** One per projection a process runs is enough for them to share a wake-up's read. */
const MAX_SHARED_READS = 8;

type LogReader = Pick<EventStore, 'readAll' | 'appendGeneration' | 'waitForAppend' | 'appendNotices'>;

/**
 * One projector process runs several projections that, once caught up, all wake on the same append and ask
 * the log for the same events. This shares one read among them: a read is reused only by callers asking for
 * the same range within the same wake-up generation, so nobody is handed a result older than what it could
 * already know about (a caller that gets a stale empty batch sees the generation moved and reads again).
 */
export class SharedLogReader implements LogReader {
  private readonly reads = new Map<string, Promise<readonly RecordedEvent[]>>();

  constructor(private readonly store: EventStore) {}

  appendGeneration(): number {
    return this.store.appendGeneration();
  }

  waitForAppend(generation: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.store.waitForAppend(generation, timeoutMs, signal);
  }

  appendNotices(): AppendNotices {
    return this.store.appendNotices();
  }

  readAll(options: ReadAllOptions): Promise<readonly RecordedEvent[]> {
    // A filtered read is a replay's own: nobody shares it.
    if (options.types || options.until !== undefined) return this.store.readAll(options);
    const generation = this.store.appendGeneration();
    const key = `${generation}:${options.after}:${options.limit}`;
    const shared = this.reads.get(key);
    if (shared) return shared;
    const read = this.store.readAll(options);
    this.reads.set(key, read);
    // Keep only the latest few reads: enough for projections moving in step, bounded during a long replay.
    for (const old of this.reads.keys()) {
      if (this.reads.size <= MAX_SHARED_READS) break;
      this.reads.delete(old);
    }
    read.catch(() => this.reads.delete(key));
    return read;
  }
}
