import type { RateLimitCount } from './rate-limit-store.ts';

/** Counts `by` requests under a key in the shared store; null when no store could count. */
export type SharedCount = (key: string, windowMs: number, by: number) => Promise<RateLimitCount | null>;

interface Window {
  readonly windowMs: number;
  endsAt: number;
  /** The shared count when this process last heard it (its own flushed hits included). */
  shared: number;
  /** This process's hits since then, not yet sent. */
  pending: number;
  /** Hits sent to the store whose new count has not come back yet: still counted, or a flush would let them through twice. */
  sending: number;
}

/**
 * A rate-limit counter for lenient limits (better-auth's 100 per 10 s on most paths) that keeps the shared
 * store off the hot path: the first hit of a window is counted in the store, later ones in the process and
 * sent to the store as one increment per key every `flushEveryMs`. A process decides on the shared count
 * it last heard plus its own hits since, so one process is exact, and several replicas together can pass
 * at most what the others let through in one flush interval over the limit. Tight limits (sign-in, mail)
 * must not use this: they stay counted in the store on every request.
 */
export class BatchedRateLimitCounter {
  private readonly windows = new Map<string, Window>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly count: SharedCount,
    private readonly options: { readonly flushEveryMs: number; readonly onError: (error: unknown) => void },
  ) {}

  hit(key: string, windowMs: number): RateLimitCount | null | Promise<RateLimitCount | null> {
    const now = Date.now();
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now) return this.openWindow(key, windowMs, now);
    window.pending += 1;
    this.schedule(windowMs);
    return { count: window.shared + window.sending + window.pending, resetInMs: window.endsAt - now };
  }

  /** Sends every pending count to the store now (on shutdown, and for tests). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    const due = [...this.windows].filter(([, w]) => w.pending > 0);
    if (due.length === 0) return;
    this.flushing = this.send(due).finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }

  private async openWindow(key: string, windowMs: number, now: number): Promise<RateLimitCount | null> {
    const counted = await this.count(key, windowMs, 1);
    if (counted) this.windows.set(key, { windowMs, endsAt: now + counted.resetInMs, shared: counted.count, pending: 0, sending: 0 });
    return counted;
  }

  private schedule(windowMs: number): void {
    if (this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.flush().catch(this.options.onError);
      },
      Math.min(this.options.flushEveryMs, windowMs),
    );
    this.timer.unref();
  }

  private async send(due: ReadonlyArray<[string, Window]>): Promise<void> {
    const now = Date.now();
    await Promise.all(
      due.map(async ([key, window]) => {
        const by = window.pending;
        window.pending = 0;
        window.sending += by;
        try {
          const counted = await this.count(key, window.windowMs, by);
          if (counted) {
            window.shared = counted.count;
            window.endsAt = now + counted.resetInMs;
          } else {
            // Not counted anywhere: keep them as this process's own, to send with the next flush.
            window.pending += by;
          }
        } catch (error) {
          window.pending += by;
          this.options.onError(error);
        } finally {
          window.sending -= by;
        }
      }),
    );
    // Closed windows are forgotten, so the map holds only the clients active in the last window.
    for (const [key, window] of this.windows) if (window.endsAt <= now && window.pending === 0) this.windows.delete(key);
  }
}
