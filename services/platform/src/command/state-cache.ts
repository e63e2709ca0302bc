/** A stream's folded state at a version, kept between commands. */
export interface CachedState {
  readonly version: number;
  readonly state: unknown;
  /** The version of the latest snapshot kept of this stream (0: none). */
  readonly snapshotVersion: number;
}

/**
 * States of recently written streams, least recently used dropped first. A command decides on a kept state
 * without reading the stream, and its append requires the stream to still be at that version, so a state
 * another process has moved past costs one failed append and a fresh read, never a wrong decision.
 */
export class StateCache {
  private readonly entries = new Map<string, CachedState>();

  constructor(private readonly limit: number) {}

  get(key: string): CachedState | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  set(key: string, entry: CachedState): void {
    if (this.limit <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
