import type { StreamModel } from '@portcullis/contracts';
import { sql, type DatabasePool } from '../database/pool.ts';
import { inSpan, instruments } from '../telemetry/telemetry.ts';
import { LOAD_CHUNK, snapshotToHead, type SnapshotStore } from './stream-loader.ts';
import { pauseUnlessAborted } from '../abortable-pause.ts';

/**
 * A stream is marked for the snapshotter each time it grows by this many events (the trigger of migration
 * 1732230000330 holds the same number): a command then folds about this many events at most after the
 * snapshotter has been, however the stream was written.
 */
export const SNAPSHOT_DUE_EVERY = 1024;

const snapshotMetrics = instruments((meter) => ({
  streams: meter.createCounter('portcullis.snapshots.background', { description: 'Streams the background snapshotter folded and snapshotted, by outcome' }),
}));

export interface BackgroundSnapshotterOptions {
  readonly pool: DatabasePool;
  /** The store commands load through (for a protected log, the protected one: it seals what it keeps). */
  readonly store: SnapshotStore;
  /** The models commands fold a stream with (by its stored id); none: the stream is only unmarked. */
  readonly modelsOf: (streamId: string) => ReadonlyArray<StreamModel<unknown>>;
  readonly onError: (error: unknown, streamId: string | null) => void;
  /** How long to wait for work when none is marked. */
  readonly idleMs?: number;
  /** How long a claimed stream is this process's: past it (a crash), another process takes it. */
  readonly leaseMs?: number;
  /** Events read at once (see `LOAD_CHUNK`). */
  readonly chunk?: number;
}

interface Claimed {
  readonly streamId: string;
  readonly markedVersion: number;
}

/**
 * Keeps snapshots of the streams the log marks as grown (`snapshot_due`), so that no command has to fold a
 * long stream from its start: one written straight to the log, or whose snapshots were dropped or are of an
 * older revision of its model. Every api process runs one; a claim is a lease on one stream's row, so they
 * share the work and a crashed one's stream is taken up once its lease runs out. A fold is chunked and keeps
 * a snapshot per chunk (see `LOAD_CHUNK`), so it never holds a whole stream and a crash loses at most a chunk.
 * A snapshot is only a cache, saved whole in one statement: a half-written one is never read.
 */
export class BackgroundSnapshotter {
  private readonly idleMs: number;
  private readonly leaseMs: number;
  private readonly chunk: number;
  private readonly stopping = new AbortController();
  private running: Promise<void> | null = null;

  constructor(private readonly options: BackgroundSnapshotterOptions) {
    this.idleMs = options.idleMs ?? 5_000;
    this.leaseMs = options.leaseMs ?? 5 * 60_000;
    this.chunk = options.chunk ?? LOAD_CHUNK;
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  /** Snapshots marked streams until none is left unclaimed; how many it did. */
  async drain(): Promise<number> {
    let done = 0;
    for (;;) {
      if (this.stopping.signal.aborted) return done;
      const claimed = await this.claim();
      if (!claimed) return done;
      await this.snapshot(claimed);
      done += 1;
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      try {
        await this.drain();
      } catch (error) {
        this.options.onError(error, null);
      }
      await pauseUnlessAborted(this.idleMs, this.stopping.signal);
    }
  }

  private async claim(): Promise<Claimed | null> {
    const row = (await this.options.pool.maybeOne(sql.unsafe`
      UPDATE snapshot_due SET claimed_until = now() + make_interval(secs => ${this.leaseMs / 1000})
      WHERE stream_id = (SELECT stream_id FROM snapshot_due WHERE claimed_until < now() ORDER BY claimed_until, stream_id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING stream_id, marked_version`)) as { stream_id: string; marked_version: number } | null;
    return row ? { streamId: row.stream_id, markedVersion: Number(row.marked_version) } : null;
  }

  /**
   * The store, refusing reads once the snapshotter is stopping: a long fold ends at its next chunk rather
   * than hold up the process's shutdown, and whoever claims the stream next starts from that chunk's snapshot.
   */
  private readonly stoppable: SnapshotStore = {
    readStreamsFromSnapshots: (requests) => {
      if (this.stopping.signal.aborted) return Promise.reject(new Error('the background snapshotter is stopping'));
      return this.options.store.readStreamsFromSnapshots(requests);
    },
    saveSnapshot: (streamId, model, version, state) => this.options.store.saveSnapshot(streamId, model, version, state),
  };

  private async snapshot({ streamId, markedVersion }: Claimed): Promise<void> {
    await inSpan('snapshot stream', { 'portcullis.stream': streamId }, async () => {
      try {
        for (const model of this.options.modelsOf(streamId)) await snapshotToHead(this.stoppable, streamId, model, this.chunk);
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        // Left claimed: it is tried again once the lease runs out, not at once in a loop.
        snapshotMetrics().streams.add(1, { outcome: 'error' });
        this.options.onError(error, streamId);
        return;
      }
      snapshotMetrics().streams.add(1, { outcome: 'ok' });
      // A mark that came in meanwhile keeps the row, free to claim at once.
      await this.options.pool.query(sql.unsafe`DELETE FROM snapshot_due WHERE stream_id = ${streamId} AND marked_version <= ${markedVersion}`);
      await this.options.pool.query(sql.unsafe`UPDATE snapshot_due SET claimed_until = '-infinity' WHERE stream_id = ${streamId}`);
    });
  }
}
