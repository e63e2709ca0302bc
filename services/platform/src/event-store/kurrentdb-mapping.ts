import {
  AccessDeniedError,
  AppendConsistencyViolationError,
  NotLeaderError,
  StreamDeletedError,
  StreamTombstonedError,
  UnavailableError,
  WrongExpectedVersionError as KurrentWrongExpectedVersionError,
  STREAM_STATE,
  convertToCommandError,
  type AppendRecordInput,
  type AppendStreamRequest,
  type AppendStreamState,
  type ConsistencyCheck,
  type JSONEventData,
  type JSONType,
  type CurrentStreamState,
  type Position,
} from '@kurrent/kurrentdb-client';
import { eventMetadataSchema, type EventMetadata } from '@portcullis/contracts';
import { WrongExpectedVersionError, type ExpectedVersion, type RecordedEvent, type StreamWrite } from './event-store.ts';

/**
 * How the log's names sit in a KurrentDB database: every stream of one log under its namespace, so one server
 * holds several logs (a deployment's, each test's) and `$all` read through the namespace's prefix is exactly
 * one log. The log's events live under `<namespace>/`; what the store keeps beside them (the log's identity)
 * under `<namespace>~`, which no read of the log sees.
 */
export class KurrentNames {
  readonly eventPrefix: string;
  private readonly besidePrefix: string;

  constructor(readonly namespace: string) {
    // '/' and '~' end the namespace: a namespace holding either could shadow another's streams.
    if (!/^[A-Za-z0-9_.-]+$/.test(namespace)) throw new Error(`not a KurrentDB namespace: ${JSON.stringify(namespace)} (letters, digits, _ . -)`);
    this.eventPrefix = `${namespace}/`;
    this.besidePrefix = `${namespace}~`;
  }

  streamName(streamId: string): string {
    return `${this.eventPrefix}${streamId}`;
  }

  /** Our stream id of a KurrentDB stream of this log's events, or null for any other stream. */
  streamIdOf(streamName: string): string | null {
    return streamName.startsWith(this.eventPrefix) ? streamName.slice(this.eventPrefix.length) : null;
  }

  /** Holds one event: the log's id, written once when the store first meets the namespace. */
  get identityStream(): string {
    return `${this.besidePrefix}log-identity`;
  }
}

/**
 * Our expected version as a KurrentDB expected state. Ours counts events (a stream of n events is at version
 * n, 0 is no stream); KurrentDB counts revisions from 0 (a stream of n events is at revision n-1).
 */
export function expectedStateOf(expected: ExpectedVersion): AppendStreamState {
  if (expected === 'any' || expected === 'no_stream' || expected === 'stream_exists') return expected;
  if (!Number.isSafeInteger(expected) || expected < 0) throw new Error(`not an expected version: ${expected}`);
  return expected === 0 ? 'no_stream' : BigInt(expected - 1);
}

/**
 * Our version of a stream KurrentDB reports as at `state`: its event count. A deleted or tombstoned stream
 * (the negative states a consistency check reports) holds no event a reader can read: version 0.
 */
export function versionOfState(state: CurrentStreamState | AppendStreamState): number {
  if (typeof state !== 'bigint') return 0;
  return state < 0n ? 0 : Number(state) + 1;
}

/** The version a stream read from KurrentDB is at once the event of this revision is its last. */
export function versionOfRevision(revision: bigint): number {
  return Number(revision) + 1;
}

/**
 * Our position of an event in `$all`: its prepare position, the byte offset of its record in the log.
 *
 * KurrentDB orders `$all` by (commit, prepare). The events of one append share a commit position and follow
 * it in prepare order, and the one writer lays each append's records down together, so prepare positions
 * rise in exactly `$all`'s order and tell the events of one append apart, which commit positions do not.
 * They are not contiguous (bytes, not counts): a projection's checkpoint is "everything up to here", and
 * "no gap" means no committed event is ever found below a position already read (commit order is log order,
 * and `$all` shows only what is committed), not that the numbers run 1, 2, 3.
 */
export function positionOf(position: Position): number {
  const prepare = Number(position.prepare);
  if (!Number.isSafeInteger(prepare)) throw new Error(`a KurrentDB position past 2^53 bytes: ${position.prepare}`);
  return prepare;
}

/**
 * How far before a prepare position its append's commit position may lie: the largest append the server takes
 * (its `MaxAppendSize` is 1 MiB by default; a multi-stream append may be larger, up to its transaction limit).
 * A generous bound costs a restarted reader one read of that many bytes of log, filtered, once.
 */
export const COMMIT_LOOKBACK_BYTES = 64 * 1024 * 1024;

/**
 * Where to read `$all` from to get every event after our position `after`: from the commit position of that
 * event's append when the reader knows it, else from far enough back to hold it. Events at or before `after`
 * come back too and are dropped (`placeInRange`).
 */
export function readFrom(after: number, knownCommit?: bigint): Position | 'start' {
  if (after <= 0) return 'start';
  const commit = knownCommit ?? BigInt(Math.max(0, after - COMMIT_LOOKBACK_BYTES));
  return { commit, prepare: commit };
}

/**
 * The positions a set of one-event reads must look up: each once, in `$all`'s order, only what can be a
 * position (a prepare position is a byte offset: a whole number above 0).
 */
export function positionsToRead(positions: readonly number[]): number[] {
  return [...new Set(positions)].filter((position) => Number.isSafeInteger(position) && position > 0).sort((a, b) => a - b);
}

/**
 * The read of `$all` that finds the event at our position and nothing else: what comes after the byte
 * before it, up to it. An empty answer, or one at another position, means no event of this log is there.
 */
export function onePositionRead(position: number): { readonly after: number; readonly until: number; readonly limit: 1 } {
  return { after: position - 1, until: position, limit: 1 };
}

/**
 * Where an event of `$all` lies against a stretch of our positions (after, until]: before it (read back from
 * a commit position at or before `after`, dropped), in it, or past it (`$all` rises: the reader stops).
 */
export function placeInRange(position: Position, range: { readonly after: number; readonly until: number }): 'before' | 'in' | 'past' {
  const ours = positionOf(position);
  if (ours <= range.after) return 'before';
  return ours > range.until ? 'past' : 'in';
}

/**
 * Our metadata as KurrentDB takes it from a multi-stream append: a flat object of strings. Each field is its
 * JSON, so a reader gets back exactly the values (a null, an object) that were written, and KurrentDB's UI
 * shows each field by name. Names starting with `$` are KurrentDB's own: none of ours may.
 */
export function encodeMetadata(metadata: EventMetadata): Record<string, string> {
  const encoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata)) {
    if (name.startsWith('$')) throw new Error(`metadata field ${name}: names starting with $ are KurrentDB's`);
    if (value !== undefined) encoded[name] = JSON.stringify(value);
  }
  return encoded;
}

/**
 * An append as KurrentDB takes it. Writes that all carry events are a multi-stream append (25.1): one request
 * per stream with its expected state. A write that only checks its stream has no form there (each request
 * writes), so such an append is records plus consistency checks (`appendRecords`), the checks apart from the
 * records: one per write whose expected version is not `any`, each against the stream as it was before the
 * append. Either way the events keep the order the writes give them, and an event without a caller's id gets
 * one here, once, so a retried call sends the same ids.
 */
export type AppendRequest =
  | { readonly kind: 'streams'; readonly streams: AppendStreamRequest[] }
  | { readonly kind: 'records'; readonly records: AppendRecordInput[]; readonly checks: ConsistencyCheck[] };

export function appendRequestOf(names: KurrentNames, writes: readonly StreamWrite[], newId: () => string): AppendRequest {
  const eventsOf = (write: StreamWrite): JSONEventData[] =>
    write.events.map((event) => ({
      id: event.eventId ?? newId(),
      contentType: 'application/json',
      type: event.type,
      data: event.data as JSONType,
      metadata: encodeMetadata(event.metadata),
    }));
  const written = writes.filter((w) => w.events.length > 0);
  if (written.length === writes.length) {
    return {
      kind: 'streams',
      streams: written.map((w) => ({ streamName: names.streamName(w.streamId), events: eventsOf(w), expectedState: expectedStateOf(w.expectedVersion) })),
    };
  }
  return {
    kind: 'records',
    records: written.flatMap((w) => eventsOf(w).map((record) => ({ streamName: names.streamName(w.streamId), record }))),
    checks: writes
      .filter((w) => w.expectedVersion !== 'any')
      .map((w) => ({ type: STREAM_STATE, streamName: names.streamName(w.streamId), expectedState: expectedStateOf(w.expectedVersion) })),
  };
}

/** Our metadata from what KurrentDB hands back: each field's JSON parsed, KurrentDB's own (`$…`) left out. */
export function decodeMetadata(stored: unknown): EventMetadata {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored) || stored instanceof Uint8Array) {
    throw new Error('a KurrentDB event without a metadata object: not written by this store');
  }
  const decoded: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(stored)) {
    if (name.startsWith('$')) continue;
    decoded[name] = typeof value === 'string' ? parseJson(value) : value;
  }
  return eventMetadataSchema.parse(decoded);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Written by another tool as a bare string: the string is the value.
    return text;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An event id as the ids KurrentDB hands back compare with it: event ids are uuids, which the server keeps as
 * 128-bit values and spells in lower case, while one pasted by an operator may be in any case. Null for what
 * is no uuid, which names no event.
 */
export function eventIdKey(id: string): string | null {
  return UUID.test(id) ? id.toLowerCase() : null;
}

/** What the adapter reads of a KurrentDB event (the client's recorded event, narrowed to what we map). */
export interface KurrentRecord {
  readonly streamId: string;
  readonly id: string;
  readonly revision: bigint;
  readonly type: string;
  readonly isJson: boolean;
  readonly data: unknown;
  readonly metadata: unknown;
  readonly created: Date;
  readonly position?: Position;
}

/** One of our events from a KurrentDB event of this log, or null for any other (another log's, a system event). */
export function toRecordedEvent(names: KurrentNames, record: KurrentRecord): RecordedEvent | null {
  const streamId = names.streamIdOf(record.streamId);
  if (streamId === null) return null;
  if (!record.position) throw new Error('a KurrentDB event without its $all position: the server is older than 22.6');
  if (!record.isJson) throw new Error(`event ${record.id} of ${record.streamId} is not JSON: not written by this store`);
  return {
    position: positionOf(record.position),
    eventId: record.id,
    streamId,
    streamVersion: versionOfRevision(record.revision),
    type: record.type,
    data: record.data,
    metadata: decodeMetadata(record.metadata),
    recordedAt: record.created,
  };
}

/** What to do with an error from KurrentDB. */
export type KurrentFailure =
  /** An expected version did not hold: our `WrongExpectedVersionError`. */
  | { readonly kind: 'conflict'; readonly error: WrongExpectedVersionError }
  /**
   * The node is not the leader, or was unreachable: the client finds the leader again on its next call. A read
   * may be tried again; an append only when it never reached a node that could have written it (not leader).
   */
  | { readonly kind: 'retry'; readonly appendMayHaveLanded: boolean }
  /** The credentials in EVENTSTORE_URL may not do this: an operator's problem, not the caller's. */
  | { readonly kind: 'denied' }
  /** Someone deleted a stream of the log outside this store (it never deletes one): no write may land on it. */
  | { readonly kind: 'deleted'; readonly streamName: string }
  | { readonly kind: 'other' };

/**
 * Classifies what the client threw. Conflicts come back naming KurrentDB's stream, state and revision; they
 * are turned into ours (the stream id, the version the write expected, the stream's event count).
 */
export function classifyFailure(names: KurrentNames, thrown: unknown, writes: readonly StreamWrite[] = []): KurrentFailure {
  // Some calls reject with gRPC's own error (a multi-stream append whose stream broke): the client's classes first.
  const error = thrown instanceof Error ? convertToCommandError(thrown) : thrown;
  const conflict = (streamName: string, actual: CurrentStreamState | AppendStreamState): KurrentFailure => {
    const streamId = names.streamIdOf(streamName) ?? streamName;
    const write = writes.find((w) => w.streamId === streamId);
    return { kind: 'conflict', error: new WrongExpectedVersionError(streamId, write?.expectedVersion ?? 'any', versionOfState(actual)) };
  };
  if (error instanceof KurrentWrongExpectedVersionError) return conflict(error.streamName, error.actualState);
  if (error instanceof AppendConsistencyViolationError) {
    const [violation] = error.violations;
    if (violation) return conflict(violation.streamName, violation.actualState);
  }
  if (error instanceof NotLeaderError) return { kind: 'retry', appendMayHaveLanded: false };
  if (error instanceof UnavailableError) return { kind: 'retry', appendMayHaveLanded: true };
  if (error instanceof AccessDeniedError) return { kind: 'denied' };
  if (error instanceof StreamDeletedError) return { kind: 'deleted', streamName: error.streamName ?? '' };
  if (error instanceof StreamTombstonedError) return { kind: 'deleted', streamName: error.stream };
  return { kind: 'other' };
}
