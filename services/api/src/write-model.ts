import { parseDomainEvent, type DomainEvent, type EventMetadata, type TimedEvent } from '@portcullis/contracts';
import type { EventStore, ExpectedVersion, StreamRead, StreamWrite } from '@portcullis/platform';

export interface Loaded<State> {
  readonly state: State;
  readonly version: number;
}

/** Folds a stream into the state a decider needs, with the version to append against. */
export function loadStream<State>(
  store: EventStore,
  streamId: string,
  evolve: (state: State, event: DomainEvent) => State,
  initial: () => State,
): Promise<Loaded<State>> {
  return loadTimedStream(store, streamId, (state, timed) => evolve(state, timed.event), initial);
}

/** `loadStream` for deciders that need each event's decision time. */
export async function loadTimedStream<State>(
  store: EventStore,
  streamId: string,
  evolve: (state: State, event: TimedEvent) => State,
  initial: () => State,
): Promise<Loaded<State>> {
  return foldTimedStream(await store.readStream(streamId), evolve, initial);
}

/** Folds a stream already read (one of several read at once) as `loadStream` does. */
export function foldStream<State>(
  read: StreamRead,
  evolve: (state: State, event: DomainEvent) => State,
  initial: () => State,
): Loaded<State> {
  return foldTimedStream(read, (state, timed) => evolve(state, timed.event), initial);
}

export function foldTimedStream<State>(
  { version, events }: StreamRead,
  evolve: (state: State, event: TimedEvent) => State,
  initial: () => State,
): Loaded<State> {
  let state = initial();
  for (const recorded of events) {
    const event = parseDomainEvent(recorded.type, recorded.data);
    if (event) state = evolve(state, { event, occurredAt: recorded.metadata.occurredAt });
  }
  return { state, version };
}

export function streamWrite(
  streamId: string,
  expectedVersion: ExpectedVersion,
  events: readonly DomainEvent[],
  metadata: EventMetadata,
): StreamWrite {
  return { streamId, expectedVersion, events: events.map((e) => ({ type: e.type, data: e.data, metadata })) };
}

/**
 * A stream an append does not write to but requires to be at `version`: a write of no events, checked
 * atomically with the rest of the append.
 */
export function unchangedStream(streamId: string, version: number): StreamWrite {
  return { streamId, expectedVersion: version, events: [] };
}
