import type { EventStore } from '../event-store/event-store.ts';
import type { ProjectionControl } from './control.ts';
import { gatherAppendsUnderWay } from './linger.ts';
import { projectedEvents } from './projected-events.ts';
import { inBatchSpan } from '../telemetry/batch-span.ts';
import { CheckpointFencedError, type ProjectedEvent, type ProjectionTarget } from './projection.ts';
import { pauseUnlessAborted } from '../abortable-pause.ts';
import { DEFAULT_STANDBY_INTERVAL_MS, LeasedLock, pauseBeforeNextTry } from '../database/leased-lock.ts';

export interface RunnerLogger {
  info(obj: object, message: string): void;
  warn(obj: object, message: string): void;
  error(obj: object, message: string): void;
}

export interface ProjectionRunnerOptions {
  readonly store: Pick<EventStore, 'readAll' | 'appendGeneration' | 'waitForAppend' | 'appendNotices'>;
  readonly target: ProjectionTarget;
  readonly databaseUrl: string;
  readonly batchSize: number;
  readonly pollIntervalMs: number;
  readonly log: RunnerLogger;
  /** How often a standby checks whether the holder is gone (on average: each pause is jittered). */
  readonly standbyIntervalMs?: number;
  /** How long a checkpoint may be held back while only batches with nothing for the projection come in. */
  readonly checkpointDeferMs?: number;
  /** Where the process hears rebuild requests (one listener for all its runners). */
  readonly control: ProjectionControl;
  /** How long a caught-up runner may wait for appends its waking append said were under way (see `gatherAppendsUnderWay`); 0: never. */
  readonly lingerMs?: number;
  /**
   * How long the holder's lock outlives its last heartbeat: Postgres ends a lock connection idle that long
   * (`idle_session_timeout`), releasing the lock to a standby, so a holder that froze (SIGSTOP, a VM paused)
   * or lost its network is replaced within about this long, instead of when the kernel gives up on it.
   */
  readonly leaseMs?: number;
}

const DEFAULT_CHECKPOINT_DEFER_MS = 250;

/** The advisory-lock key of a projection: one holder per projection across every projector process. */
export function projectionLockKey(name: string): string {
  return `portcullis.projection.${name}`;
}

/**
 * Follows the log for one projection. Holds the projection's advisory lock on a dedicated connection, kept
 * alive by a heartbeat (see `leaseMs`); when the holding process dies or stops answering, Postgres ends
 * that connection and drops the lock, and a standby takes over from the stored checkpoint. A holder that
 * comes back after losing its lock is fenced off by the checkpoint: its next batch moves nothing.
 */
export class ProjectionRunner {
  private readonly abort = new AbortController();
  private readonly lock: LeasedLock;
  private readonly reportedUnknownTypes = new Set<string>();
  private unwatchControl: (() => void) | null = null;
  private releaseRequested = false;
  /** A reader asked for what the runner holds back (see `ProjectionTarget.holdsBack`). */
  private hurried = false;
  /** Ends the runner's wait for the next append: stopping, or a hurry. */
  private wake = new AbortController();
  private loop: Promise<void> | null = null;
  private storedPosition: number | null = null;

  constructor(private readonly options: ProjectionRunnerOptions) {
    this.lock = new LeasedLock({ databaseUrl: options.databaseUrl, key: projectionLockKey(options.target.name), ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }) });
  }

  private get holding(): boolean {
    return this.lock.held;
  }

  get name(): string {
    return this.options.target.name;
  }

  /** The checkpoint this runner last stored or read, while it holds the projection; null otherwise (metrics). */
  get checkpointPosition(): number | null {
    return this.holding ? this.storedPosition : null;
  }

  get isHolder(): boolean {
    return this.holding;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.wake.abort();
    await this.loop;
    await this.dropLock();
  }

  private async run(): Promise<void> {
    const { target, store, log } = this.options;
    const deferMs = this.options.checkpointDeferMs ?? DEFAULT_CHECKPOINT_DEFER_MS;
    // `stored` is the checkpoint as written (a batch fences on it); `checkpoint` is how far this runner has
    // read, ahead of `stored` only by batches that had nothing for this projection or only events it holds.
    let stored = 0;
    let checkpoint = 0;
    // Events read and handled but not yet applied (see `ProjectionTarget.holdsBack`): all of a type it may
    // hold back, all up to `checkpoint`, applied with the checkpoint's next move.
    let held: ProjectedEvent[] = [];
    let heldSince = 0;
    /** The id of the event at `checkpoint`: a checkpoint held back is written with it later. */
    let checkpointEventId: string | null = null;
    let storedAt = 0;
    const storeCheckpoint = async (events: readonly ProjectedEvent[], to: number, toEventId: string | null): Promise<void> => {
      // A hurry heard while this batch is written may want more than it holds: it stands for the next one.
      this.hurried = false;
      const batch = held.length === 0 ? events : [...held, ...events];
      await inBatchSpan(
        `projection ${this.name}`,
        { 'portcullis.projection': this.name, 'portcullis.projection.events': batch.length, 'portcullis.projection.to': to },
        () => batch.map((p) => p.recorded.metadata.traceparent),
        () => target.applyBatch(batch, stored, to, toEventId),
      );
      stored = checkpoint = to;
      this.storedPosition = to;
      checkpointEventId = toEventId;
      storedAt = Date.now();
      held = [];
    };
    /** Back to the stored checkpoint (a lock taken, a batch failed): what was read past it is read again. */
    const restartFrom = (checkpointStored: number): void => {
      stored = checkpoint = checkpointStored;
      this.storedPosition = checkpointStored;
      held = [];
    };
    const holdsBack = target.holdsBack;
    /**
     * How long the stored checkpoint may still trail; at or below 0 a held-back one is due. Held events are
     * due `holdsBack.ms` after the first of them was held, and at once when a reader hurries them.
     */
    const deferRemainingMs = (): number => {
      if (this.hurried) return 0;
      return held.length === 0 ? deferMs - (Date.now() - storedAt) : holdsBack!.ms - (Date.now() - heldSince);
    };
    /** How long to wait for the next append: no longer than a held-back checkpoint may stay unwritten. */
    const idleWaitMs = (): number => (checkpoint > stored ? Math.max(0, deferRemainingMs()) : this.options.pollIntervalMs);
    const gatherMs = target.gatherMs ?? 0;
    let lastReadAt = Number.NEGATIVE_INFINITY;
    let wokenByAppend = false;
    const waitForAppend = async (generation: number): Promise<void> => {
      await store.waitForAppend(generation, idleWaitMs(), this.wake.signal);
      wokenByAppend = store.appendGeneration() !== generation;
    };
    while (!this.abort.signal.aborted) {
      try {
        if (!this.holding) {
          if (!(await this.tryAcquire())) {
            await pauseBeforeNextTry(this.options.standbyIntervalMs ?? DEFAULT_STANDBY_INTERVAL_MS, this.abort.signal);
            continue;
          }
          restartFrom(await target.readCheckpoint(this.abort.signal));
          storedAt = Date.now();
          log.info({ projection: this.name, checkpoint }, 'projection lock acquired');
        }
        if (this.releaseRequested) {
          this.releaseRequested = false;
          if (checkpoint > stored) await storeCheckpoint([], checkpoint, checkpointEventId);
          log.info({ projection: this.name }, 'projection lock released on request');
          await this.dropLock();
          continue;
        }
        if (wokenByAppend && gatherMs > 0) {
          wokenByAppend = false;
          const wait = lastReadAt + gatherMs - Date.now();
          if (wait > 0) await pauseUnlessAborted(wait, this.abort.signal);
        } else if (wokenByAppend) {
          wokenByAppend = false;
          // A hurry or a stop ends the wait: both abort `wake`.
          await gatherAppendsUnderWay(store, this.options.lingerMs ?? 0, this.wake.signal);
        }
        const generation = store.appendGeneration();
        lastReadAt = Date.now();
        const recorded = await store.readAll({ after: checkpoint, limit: this.options.batchSize });
        if (recorded.length === 0) {
          // Caught up. A checkpoint held back over batches with nothing for this projection is written once
          // it is due, so an idle log sees every checkpoint reach the head.
          if (checkpoint > stored && deferRemainingMs() <= 0) await storeCheckpoint([], checkpoint, checkpointEventId);
          else {
            await target.caughtUp?.();
            await waitForAppend(generation);
          }
          continue;
        }
        const projected = projectedEvents(recorded, target.handles, (type) => this.reportUnknownType(type));
        const last = recorded[recorded.length - 1]!;
        const to = last.position;
        // Nothing here for this projection, or only events it may hold back: moving its checkpoint now would
        // be a write (and a wake-up for every api waiting on it) that changes no row, or one write per
        // request. Hold it back, within bounds, so that a restart re-reads little and readers of the
        // checkpoint see it trail by no more than a moment.
        const mayHold = to - stored < this.options.batchSize && projected.every((p) => holdsBack?.types.has(p.event.type) === true);
        if (mayHold) {
          if (held.length === 0 && projected.length > 0) heldSince = Date.now();
          held.push(...projected);
        }
        if (mayHold && deferRemainingMs() > 0) {
          checkpoint = to;
          checkpointEventId = last.eventId;
        } else await storeCheckpoint(mayHold ? [] : projected, to, last.eventId);
        // A short batch was the whole visible log: rather than read again to find it empty, wait for the
        // next append (at once if one came in since this read began, which the generation tells), or, with a
        // checkpoint held back, until it is due.
        if (recorded.length < this.options.batchSize) await waitForAppend(generation);
      } catch (error) {
        if (this.abort.signal.aborted) break;
        if (error instanceof CheckpointFencedError) {
          log.warn({ projection: this.name }, 'checkpoint moved under us; re-reading it');
          restartFrom(await target.readCheckpoint(this.abort.signal).catch(() => stored));
          continue;
        }
        log.error({ projection: this.name, err: error }, 'projection batch failed; retrying');
        await pauseUnlessAborted(1000, this.abort.signal);
        // A failed batch moved nothing, so the stored checkpoint is the truth. It may be past ours: a dead
        // holder's last COMMIT can land after we took the lock and read the checkpoint, and then our batch
        // fails on its rows (a unique violation) before it reaches the fence. Retrying from our stale
        // checkpoint would fail the same way for ever.
        restartFrom(await target.readCheckpoint(this.abort.signal).catch(() => stored));
      }
    }
    // Stopping: write what was held back, so the next holder does not re-read it.
    if (this.holding && checkpoint > stored) await storeCheckpoint([], checkpoint, checkpointEventId).catch(() => {});
  }

  private reportUnknownType(type: string): void {
    if (this.reportedUnknownTypes.has(type)) return;
    this.reportedUnknownTypes.add(type);
    this.options.log.warn({ projection: this.name, type }, 'skipping events of a type this version does not know (written by a newer version?)');
  }

  private async tryAcquire(): Promise<boolean> {
    if (!(await this.lock.tryAcquire())) return false;
    // A rebuild asks the holder to step aside; it has already queued for the lock, so it gets it next.
    this.unwatchControl?.();
    this.unwatchControl = this.options.control.watch(this.name, {
      onRelease: () => {
        this.releaseRequested = true;
      },
      onHurry: () => {
        this.hurried = true;
        const waiting = this.wake;
        this.wake = new AbortController();
        waiting.abort();
      },
    });
    return true;
  }

  private async dropLock(): Promise<void> {
    this.unwatchControl?.();
    this.unwatchControl = null;
    await this.lock.release();
  }
}
