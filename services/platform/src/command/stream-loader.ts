import { parseDomainEvent, snapshotKind, type StreamModel } from '@portcullis/contracts';
import type { EventStore, SnapshotRead } from '../event-store/event-store.ts';

/**
 * A snapshot is kept once this many events have been folded since the last one: loading any stream then
 * folds at most this many events, however long it has grown (DESIGN: a command's cost does not grow with
 * history).
 */
export const SNAPSHOT_INTERVAL = 64;

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

/** The snapshot to keep of a state, when enough events have been folded since the last one; else null. */
function snapshotDue<State>(model: StreamModel<State>, folded: FoldedStream<State>): { model: string; state: unknown } | null {
  if (model.snapshots === false || folded.version - folded.snapshotVersion < SNAPSHOT_INTERVAL) return null;
  return { model: snapshotKind(model), state: model.snapshot ? model.snapshot.encode(folded.state) : folded.state };
}

export type SnapshotStore = Pick<EventStore, 'readStreamsFromSnapshots' | 'saveSnapshot'>;

/**
 * Folds streams from their snapshots, and keeps a new snapshot of any whose fold ran long (in the
 * background: a snapshot is only ever a cache, and a failed write of one costs the next load a longer fold).
 */
export async function loadStreams<State>(
  store: SnapshotStore,
  specs: ReadonlyArray<readonly [string, StreamModel<State>]>,
  onSnapshotError: (error: unknown) => void = () => {},
): Promise<Map<string, FoldedStream<State>>> {
  const reads = await store.readStreamsFromSnapshots(specs.map(([streamId, model]) => ({ streamId, model: snapshotKind(model) })));
  const folded = new Map<string, FoldedStream<State>>();
  for (const [streamId, model] of specs) {
    const stream = foldSnapshotRead(model, reads.get(streamId)!);
    folded.set(streamId, stream);
    keepSnapshotIfDue(store, streamId, model, stream, onSnapshotError);
  }
  return folded;
}

/** One stream, as `loadStreams` folds it. */
export async function loadStream<State>(store: SnapshotStore, streamId: string, model: StreamModel<State>): Promise<FoldedStream<State>> {
  return (await loadStreams(store, [[streamId, model]])).get(streamId)!;
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
