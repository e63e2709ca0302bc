/** After a linger that gathered nothing, how long before lingering may start again. */
const PAUSE_AFTER_FRUITLESS_MS = 1000;

/**
 * Whether a caught-up runner, woken by an append, waits a moment before reading it, so that appends arriving
 * close together are projected as one batch: one transaction, one checkpoint move, one notice to every api
 * waiting, instead of one each. That is group commit, and like it, it trades a little latency under load for
 * throughput, so it lingers only while it pays:
 *
 * - it lingers when an append comes in less than `lingerMs` after the previous read, so the log is busy
 *   enough that a wait gathers more;
 * - a linger that gathered nothing turns lingering off for a second. That is the lone client whose next
 *   write waits on this one's projection (read-your-writes): nothing can arrive while it waits, so waiting
 *   would only slow that client down.
 */
export class LingerPolicy {
  private lastReadAt = Number.NEGATIVE_INFINITY;
  private pausedUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly lingerMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Called when an append wakes the caught-up runner, before it reads: how long to wait first (0: not). */
  beforeRead(): number {
    const at = this.now();
    const busy = at - this.lastReadAt < this.lingerMs;
    const wait = this.lingerMs > 0 && at >= this.pausedUntil && busy ? this.lingerMs : 0;
    this.lastReadAt = at + wait;
    return wait;
  }

  /** After a linger: how many appends came in while waiting. */
  onLingered(gathered: number): void {
    if (gathered === 0) this.pausedUntil = this.now() + PAUSE_AFTER_FRUITLESS_MS;
  }
}
