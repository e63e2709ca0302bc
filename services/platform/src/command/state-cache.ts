import { LRUCache } from 'lru-cache';

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
  /** Null when keeping states is off (a limit of 0). */
  private readonly entries: LRUCache<string, CachedState> | null;

  constructor(limit: number) {
    this.entries = limit > 0 ? new LRUCache<string, CachedState>({ max: limit }) : null;
  }

  get(key: string): CachedState | undefined {
    return this.entries?.get(key);
  }

  set(key: string, entry: CachedState): void {
    this.entries?.set(key, entry);
  }

  delete(key: string): void {
    this.entries?.delete(key);
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }
}
