import type { DomainEvent } from '@portcullis/contracts';
import type { CommonQueryMethods } from '../database/pool.ts';
import type { EventFields, RecordedEvent } from '../event-store/event-store.ts';

/**
 * Where a projection keeps its state and its checkpoint, written together atomically so that a crash at any
 * point neither loses nor double-applies an event. Implementations fence on the checkpoint they read: a
 * holder that lost its lock (or a rebuild that reset it) cannot commit over a newer state.
 */
export interface ProjectionTarget {
  readonly name: string;
  /**
   * The event types it is built from; the runner hands it no others. A batch with none of them needs no
   * write, so its checkpoint may trail the log for a moment (see the runner). Absent: every type.
   */
  readonly handles?: ReadonlySet<string>;
  /**
   * For a projection no write waits on (read-your-writes never names it): woken by an append, its runner
   * reads no sooner than this long after its last read, so a busy log reaches it in batches of many events,
   * one transaction each, instead of one transaction per request. Absent or 0: it reads at once.
   */
  readonly gatherMs?: number;
  /**
   * Events of these types no answer waits for this read model to show: read at once with the others (the
   * read is shared), they are held in the projector and applied with the next event of another type, once
   * `ms` have passed since the first was held, or when a reader asks for them (`hurryRequest`). A busy log
   * then costs the read model one write for several requests, and anything else is applied as soon as ever.
   */
  readonly holdsBack?: HoldBack;
  /** The most events one `applyBatch` may be handed, whatever batch size a replay asks for (absent: any). */
  readonly batchLimit?: number;
  /**
   * What of each event its handlers read, when that is little (see `EventFields`): a replay asks the log for
   * only that (live, the projector reads whole events once for every projection). Where it narrows the
   * data, a replay hands it events as stored, that part neither parsed nor upcast. Absent: whole events.
   */
  readonly reads?: EventFields;
  /**
   * Where to go on from. A target may first bring a state nobody reads yet close to the head itself (the
   * Redis cache filling a new generation); `signal` ends that between batches (its runner stopping).
   */
  readCheckpoint(signal?: AbortSignal): Promise<number>;
  /**
   * Applies `events` (already filtered to known types) and moves the checkpoint from `from` to `to`, the
   * position of the log event with id `toEventId` (which may be one the projection does not handle).
   */
  applyBatch(events: readonly ProjectedEvent[], from: number, to: number, toEventId?: string | null): Promise<void>;
  /**
   * How a replay applies a batch, when it has a way of its own (see `PostgresProjection.replay`); the batch
   * is every event of the log in (from, to], read with `reads`. Absent: `applyBatch`.
   */
  replayBatch?(events: readonly ProjectedEvent[], from: number, to: number): Promise<void>;
  /** Told by its runner each time it has read the whole log: a replay that was waiting for that may finish. */
  caughtUp?(): Promise<void>;
  /**
   * An empty copy beside the served state, which no reader sees, for a rebuild to replay the log into and
   * then swap in (`ShadowTarget.promote`): a read model is never served half-replayed. Read models have one.
   */
  createShadow?(): Promise<ShadowTarget>;
  /** Empties the state and sets the checkpoint to 0; the caller holds the projection's lock. For targets without a shadow. */
  reset?(): Promise<void>;
}

export interface HoldBack {
  readonly types: ReadonlySet<string>;
  readonly ms: number;
}

export interface ShadowTarget extends ProjectionTarget {
  /**
   * Replaces the served state with this one, checkpoint included, atomically for readers. The caller holds
   * the projection's lock and has brought the shadow to the head of the log.
   */
  promote(): Promise<void>;
  /**
   * Told when the bulk of the log is in, before the last stretch: builds what it put off until then
   * (indexes). `promote` builds it too if it was not told.
   */
  loaded?(): Promise<void>;
  /** Drops the shadow (a rebuild that failed or was abandoned). */
  discard(): Promise<void>;
}

export interface ProjectedEvent {
  readonly event: DomainEvent;
  readonly recorded: RecordedEvent;
}

/**
 * What a projection handler may run. Its statements are atomic with the batch's checkpoint move: a batch no
 * handler writes for costs one statement (the move), a batch of one INSERT, UPDATE or DELETE one statement
 * too (the write and the move together), and anything more a transaction. So a write's result is not
 * available: it may not have run yet when `query` returns. `maybeOneFirst` runs at once and sees every
 * write before it.
 */
export interface ProjectionSql {
  query(query: Parameters<CommonQueryMethods['query']>[0]): Promise<void>;
  maybeOneFirst: CommonQueryMethods['maybeOneFirst'];
}

/** A Postgres read-model projection: one handler per event, run inside the batch's transaction. */
export interface PostgresProjection {
  readonly name: string;
  /** Tables it owns, emptied on rebuild. */
  readonly tables: readonly string[];
  /** The event types it is built from (absent: every type). */
  readonly handles?: ReadonlySet<string>;
  /** See `ProjectionTarget.gatherMs`. */
  readonly gatherMs?: number;
  /** See `ProjectionTarget.reads`. */
  readonly reads?: EventFields;
  /**
   * Indexes and unique constraints of its tables, by name, that a rebuild builds only once the bulk of
   * the log is in its shadow: an index built over loaded rows costs a fraction of one kept up row by row.
   * Only ones none of its statements finds rows by (each such statement would read the whole table).
   */
  readonly indexesAfterLoad?: readonly string[];
  apply(tx: ProjectionSql, projected: ProjectedEvent): Promise<void>;
  /**
   * A batch's events at once, for a projection that can write them in fewer statements than a handler call
   * each (a multi-row INSERT for a run of creations). It must leave exactly the rows `apply` would, event by
   * event in order. Absent: `apply` for each.
   */
  applyAll?(tx: ProjectionSql, events: readonly ProjectedEvent[]): Promise<void>;
  /**
   * A replay's own way, for a projection whose rows are each made from one event alone: Postgres makes them
   * from the log's table itself, in one statement a batch, so this process reads (`reads`, which replaces
   * `reads` above) and parses only what Postgres cannot work out alone: the personal values, which open
   * only here. It must leave exactly the rows `apply` would.
   */
  readonly replay?: {
    readonly reads: EventFields;
    /** Writes the rows of every event in (range.after, range.until]; `events` are those events, read with `reads`. */
    applyAll(tx: ProjectionSql, events: readonly ProjectedEvent[], range: { readonly after: number; readonly until: number }): Promise<void>;
  };
}

export class CheckpointFencedError extends Error {
  constructor(name: string, expected: number) {
    super(`projection ${name}: checkpoint moved away from ${expected} (lost lock or rebuilt)`);
    this.name = 'CheckpointFencedError';
  }
}
