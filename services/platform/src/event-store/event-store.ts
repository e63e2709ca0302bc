import type { EventMetadata } from '@portcullis/contracts';

/**
 * What an append expects of a stream before it writes: anything, nothing yet, something, or exactly this
 * many events (a stream's version is its event count; 0 is the same as "no_stream").
 */
export type ExpectedVersion = 'any' | 'no_stream' | 'stream_exists' | number;

export interface NewEvent {
  readonly type: string;
  readonly data: unknown;
  readonly metadata: EventMetadata;
  /** Optional caller-chosen id (a uuid): an append that repeats a stored id is refused, so a retry never doubles an event. */
  readonly eventId?: string;
}

export interface RecordedEvent {
  readonly position: number;
  readonly eventId: string;
  readonly streamId: string;
  /** 1 for the first event of a stream. */
  readonly streamVersion: number;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: EventMetadata;
  readonly recordedAt: Date;
}

export interface ReadAllOptions {
  readonly after: number;
  readonly limit: number;
  /**
   * Only events stored under these types (a replay that needs few of the log's types: the others are
   * skipped by the store rather than sent, decoded and dropped). Needs: a filter on type by the engine.
   */
  readonly types?: readonly string[];
  /** Nothing past this position (a head read before: the range is then exactly what a filtered read covered). */
  readonly until?: number;
  /** Only these fields of each event (see `EventFields`); absent: the whole event. */
  readonly fields?: EventFields;
}

/** A stretch of the log: the events after `after` up to and including `until`, counted up to `atMost`. */
export interface EventRange {
  readonly after: number;
  readonly until: number;
  readonly atMost: number;
}

/**
 * What a reader reads of each event, for one that reads little of it (a replay of the whole log into the
 * audit index): only these top-level fields of its data, of its metadata, or of both (a part left out is
 * read whole). A field the event lacks, or holds null, is left out; `occurredAt` always comes. A store that
 * can narrow sends only these, so only these are decrypted; another may send whole events, which a reader
 * must take as well.
 */
export interface EventFields {
  readonly data?: readonly string[];
  readonly metadata?: readonly string[];
}

export interface AppendOptions {
  /**
   * How many other appends the writer has coming soon (the api: its commands whose passwords are being
   * checked or hashed), told to followers with this append: one woken by it may wait for those and project
   * them together. A hint: a count too high costs a follower a bounded wait, never a wrong read.
   */
  readonly othersUnderWay?: number;
}

export interface AppendNotices {
  /** Appends heard of through the log's notices (this process's own too), counted from its start. */
  readonly heard: number;
  /** What the latest of them said its writer had under way besides it. */
  readonly othersUnderWay: number;
}

export interface StreamWrite {
  readonly streamId: string;
  readonly expectedVersion: ExpectedVersion;
  /**
   * May be empty when another write of the same append has events: the stream is then only checked, so
   * the append lands only if the stream is still at the expected version, and nothing is written to it.
   */
  readonly events: readonly NewEvent[];
}

export interface AppendResult {
  /** Global position of the last event written. */
  readonly position: number;
  /** Each written stream's version after the append. */
  readonly versions: Readonly<Record<string, number>>;
}

/** How much of a stream to read: its first `limit` events (absent: all of them). */
export interface StreamReadOptions {
  readonly limit?: number;
}

export interface StreamRead {
  readonly version: number;
  readonly events: readonly RecordedEvent[];
}

/** A stream read from its latest snapshot on: the snapshot (if any), then only the events after it. */
export interface SnapshotRead {
  readonly snapshot: { readonly version: number; readonly state: unknown } | null;
  /**
   * The events after the snapshot's version; `version` is the last one's (the snapshot's if none): the
   * stream's, unless the request's `limit` cut the read short (as many events as the limit: read on).
   */
  readonly read: StreamRead;
}

/** Which stream to read from its snapshot of which kind, and at most how many events after it (absent: all). */
export interface SnapshotReadRequest {
  readonly streamId: string;
  readonly model: string;
  readonly limit?: number;
}

export interface Subscription {
  stop(): Promise<void>;
  /** Settles when the subscription has stopped; rejects with the handler's error if it failed. */
  readonly done: Promise<void>;
}

export interface SubscribeOptions {
  /** Deliver events with a position greater than this. */
  readonly after: number;
  readonly batchSize?: number;
  readonly onEvents: (events: readonly RecordedEvent[]) => Promise<void>;
}

export class WrongExpectedVersionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`stream ${streamId}: expected version ${String(expected)}, found ${actual}`);
    this.name = 'WrongExpectedVersionError';
  }
}

/**
 * The append-only log every change goes through. Adapters: Postgres (`postgres.ts`), KurrentDB (`kurrentdb.ts`). What each operation
 * asks of an engine is said beside it; EventStoreDB's successor KurrentDB (server 25.1 and later, through
 * `@kurrent/kurrentdb-client`) offers each: `multiStreamAppend` for atomic appends to several streams with
 * an expected revision per stream, per-stream reads, `$all` reads by commit position (stable and gap-free
 * in commit order), and subscriptions to `$all`.
 */
export interface EventStore {
  /**
   * Appends to one or more streams atomically: every write lands or none does, and each write's expected
   * version is checked within that same atomic step (a write without events is only checked). Needs: a
   * multi-stream atomic append with optimistic concurrency per stream, and a global position for each
   * event that readers of the whole log see in commit order (no later-committed event below an earlier
   * one). Event ids are unique: an append repeating a stored id is refused, so a retry never doubles.
   */
  append(writes: readonly StreamWrite[], options?: AppendOptions): Promise<AppendResult>;
  /**
   * One stream, whole, in order, with its version; with a `limit`, only its first events, `version` then the
   * last one's (what names an object: a stream's opening event). Needs: a read of a stream by name from its
   * start, of at most a count.
   */
  readStream(streamId: string, options?: StreamReadOptions): Promise<StreamRead>;
  /** Several streams in one read, each as `readStream` would answer it (a missing one is version 0). */
  readStreams(streamIds: readonly string[]): Promise<ReadonlyMap<string, StreamRead>>;
  /**
   * Several streams, each from its latest snapshot of a given kind (`model`) on, in one read: what a
   * decision loads, at a cost bounded by the snapshot interval rather than the stream's length. A request's
   * `limit` caps the events read after the snapshot (a long stream without one is then folded a chunk at
   * a time, never held whole). Needs: somewhere beside the log to keep a state per stream and kind (the
   * `snapshots` table, on KurrentDB too: see `SnapshotTable`), and a read of a stream from a version, of
   * at most a count.
   */
  readStreamsFromSnapshots(requests: ReadonlyArray<SnapshotReadRequest>): Promise<ReadonlyMap<string, SnapshotRead>>;
  /**
   * Keeps a folded state of a stream at a version; an older one than what is kept is ignored, one at the same
   * version replaces it (a fold from the start replacing a snapshot whose sealed values no longer open).
   */
  saveSnapshot(streamId: string, model: string, version: number, state: unknown): Promise<void>;
  /**
   * Events after a global position, in position order. Needs: a read of the whole log from a position,
   * that never skips an event committing after a later position was read (projections rely on it).
   */
  readAll(options: ReadAllOptions): Promise<readonly RecordedEvent[]>;
  /** The position of the last event committed. */
  headPosition(): Promise<number>;
  /**
   * How many events lie in (after, until], counted no further than `atMost` where counting means reading
   * them: an answer of `atMost` means "at least that many". What a lag in events is (a projection's
   * checkpoint against a head read before), where positions are not counts. Needs: positions that count
   * events (then it is `until - after`, exactly, whatever `atMost`), or a read of the whole log in a range.
   */
  countEvents(range: EventRange): Promise<number>;
  /**
   * The id every copy of this log shares, written once when the log was created (caches carry it). Needs:
   * somewhere to keep one value with the log (a table; on KurrentDB, the first event of a stream beside the log's).
   */
  logId(): Promise<string>;
  /**
   * The id of the event at a global position, or null where there is none: tells one history from another
   * (a cache built from a later history than a restored backup). Needs: a read of one event by position.
   */
  eventIdAt(position: number): Promise<string | null>;
  /**
   * The events at these global positions, in position order; a position where there is none is left out
   * (the audit trail shows a page its index found). Needs: a read of one event by position; Postgres
   * answers the whole set in one read.
   */
  eventsAt(positions: readonly number[]): Promise<readonly RecordedEvent[]>;
  /**
   * The event of this id, or null where the log has none (an id pasted from a log line into the console).
   * Needs: a read of one event by its id. Postgres has an index on it; KurrentDB has none, so it reads `$all`
   * backwards from the head until it meets the id: recent events, which log lines name, are found soon, but
   * an id the log does not hold costs a read of the whole log.
   */
  eventById(eventId: string): Promise<RecordedEvent | null>;
  /**
   * A counter that moves on every append this process hears of. Read it before reading the log, then
   * `waitForAppend(generation, …)` returns at once if an append came in between, so no wake-up is missed.
   */
  appendGeneration(): number;
  /**
   * The appends heard of so far, and how many others the writer of the latest one said
   * it had under way (`AppendOptions.othersUnderWay`). Zeros from an engine that cannot carry the count.
   */
  appendNotices(): AppendNotices;
  /** Resolves when the generation has moved past `generation`, or after `timeoutMs`. */
  waitForAppend(generation: number, timeoutMs: number, signal?: AbortSignal): Promise<void>;
  subscribe(options: SubscribeOptions): Subscription;
  close(): Promise<void>;
}

