import { parseDomainEvent, snapshotKind, type StreamModel } from '@portcullis/contracts';
import type { EventStore, SnapshotRead, SnapshotReadRequest } from '../event-store/event-store.ts';

/**
 * A snapshot is kept once this many events have been folded since the last one: loading any stream then
 * folds at most this many events, however long it has grown (DESIGN: a command's cost does not grow with
 * history).
 */
export const SNAPSHOT_INTERVAL = 64;

/**
 * Events a load reads after a snapshot at once. A longer tail (a stream written without commands, or whose
 * snapshots were dropped) is folded a chunk at a time, each chunk's state kept as a snapshot that the next
 * read starts from: a load never holds more than this many events, and a fold cut short (a crash) is taken
 * up from its last chunk by the next.
 */
export const LOAD_CHUNK = 10_000;

/** A stream folded from its latest snapshot on, with the version it is at and the snapshot's. */
export interface FoldedStream<State> {
  readonly state: State;
  readonly version: number;
  /** The version of the snapshot the fold started from (0: none), for deciding when to keep another. */
  readonly snapshotVersion: number;
}

function foldSnapshotRead<State>(model: StreamModel<State>, { snapshot, read }: SnapshotRead): FoldedStream<State> {
  let state = snapshot ? (model.snapshot ? model.snapshot.decode(snapshot.state) : (snapshot.state as State)) : model.initial();
  for (const recorded of read.events) {
    const event = parseDomainEvent(recorded.type, recorded.data);
    if (event) state = model.evolve(state, event, recorded.metadata);
  }
  return { state, version: read.version, snapshotVersion: snapshot?.version ?? 0 };
}

/** A state as its snapshot keeps it. */
function snapshotState<State>(model: StreamModel<State>, state: State): unknown {
  return model.snapshot ? model.snapshot.encode(state) : state;
}

/** The snapshot to keep of a state, when enough events have been folded since the last one; else null. */
function snapshotDue<State>(model: StreamModel<State>, folded: FoldedStream<State>): { model: string; state: unknown } | null {
  if (model.snapshots === false || folded.version - folded.snapshotVersion < SNAPSHOT_INTERVAL) return null;
  return { model: snapshotKind(model), state: snapshotState(model, folded.state) };
}

export type SnapshotStore = Pick<EventStore, 'readStreamsFromSnapshots' | 'saveSnapshot'>;

function requestOf<State>(streamId: string, model: StreamModel<State>, chunk: number): SnapshotReadRequest {
  // A model never snapshotted has no snapshot to read on from: its streams are read whole (they are short).
  return model.snapshots === false ? { streamId, model: snapshotKind(model) } : { streamId, model: snapshotKind(model), limit: chunk };
}

/**
 * The rest of a stream whose read stopped at the chunk: keeps the state reached as a snapshot, reads on
 * from it, and so on until a read comes back short. Where a chunk's snapshot is not kept (a failed write,
 * or one the store will not vouch for) the rest is read at once, as loads did before chunks.
 */
async function foldOn<State>(
  store: SnapshotStore,
  streamId: string,
  model: StreamModel<State>,
  folded: FoldedStream<State>,
  chunk: number,
  onSnapshotError: (error: unknown) => void,
): Promise<FoldedStream<State>> {
  const kind = snapshotKind(model);
  let stream = folded;
  for (;;) {
    try {
      await store.saveSnapshot(streamId, kind, stream.version, snapshotState(model, stream.state));
    } catch (error) {
      onSnapshotError(error);
    }
    const read = (await store.readStreamsFromSnapshots([{ streamId, model: kind, limit: chunk }])).get(streamId)!;
    if ((read.snapshot?.version ?? 0) < stream.version) {
      return foldSnapshotRead(model, (await store.readStreamsFromSnapshots([{ streamId, model: kind }])).get(streamId)!);
    }
    stream = foldSnapshotRead(model, read);
    if (read.read.events.length < chunk) return stream;
  }
}

/**
 * Folds streams from their snapshots, and keeps a new snapshot of any whose fold ran long (in the
 * background: a snapshot is only ever a cache, and a failed write of one costs the next load a longer fold).
 * A tail longer than `chunk` is folded chunk by chunk (see `LOAD_CHUNK`).
 */
export async function loadStreams<State>(
  store: SnapshotStore,
  specs: ReadonlyArray<readonly [string, StreamModel<State>]>,
  onSnapshotError: (error: unknown) => void = () => {},
  chunk: number = LOAD_CHUNK,
): Promise<Map<string, FoldedStream<State>>> {
  const reads = await store.readStreamsFromSnapshots(specs.map(([streamId, model]) => requestOf(streamId, model, chunk)));
  const folded = new Map<string, FoldedStream<State>>();
  for (const [streamId, model] of specs) {
    const read = reads.get(streamId)!;
    let stream = foldSnapshotRead(model, read);
    if (model.snapshots !== false && read.read.events.length >= chunk) stream = await foldOn(store, streamId, model, stream, chunk, onSnapshotError);
    folded.set(streamId, stream);
    keepSnapshotIfDue(store, streamId, model, stream, onSnapshotError);
  }
  return folded;
}

/** One stream, as `loadStreams` folds it. */
export async function loadStream<State>(store: SnapshotStore, streamId: string, model: StreamModel<State>, chunk: number = LOAD_CHUNK): Promise<FoldedStream<State>> {
  return (await loadStreams(store, [[streamId, model]], undefined, chunk)).get(streamId)!;
}

/**
 * A stream folded to its head and its snapshot kept there, the save awaited (the background snapshotter's
 * step): the next load of it reads the snapshot and only what came after. False when the model keeps none.
 */
export async function snapshotToHead<State>(store: SnapshotStore, streamId: string, model: StreamModel<State>, chunk: number = LOAD_CHUNK): Promise<boolean> {
  if (model.snapshots === false) return false;
  const failures: Error[] = [];
  const noteFailure = (error: unknown): void => void failures.push(error instanceof Error ? error : new Error(String(error)));
  const stream = (await loadStreams(store, [[streamId, model]], noteFailure, chunk)).get(streamId)!;
  if (failures[0]) throw failures[0];
  if (stream.version > stream.snapshotVersion) await store.saveSnapshot(streamId, snapshotKind(model), stream.version, snapshotState(model, stream.state));
  return true;
}

export function keepSnapshotIfDue<State>(
  store: SnapshotStore,
  streamId: string,
  model: StreamModel<State>,
  stream: FoldedStream<State>,
  onSnapshotError: (error: unknown) => void,
): boolean {
  const due = snapshotDue(model, stream);
  if (!due) return false;
  store.saveSnapshot(streamId, due.model, stream.version, due.state).catch(onSnapshotError);
  return true;
}
