import type { DomainEvent } from './index.ts';

/** When an event was decided: what a fold that counts time (windows, expiries) needs beside the event. */
export interface EventTime {
  readonly occurredAt: string;
}

/**
 * How one kind of stream folds into the state its commands decide on (emmett's `evolve` and
 * `initialState`). `name` and `revision` key the states kept between commands: a change to `evolve` must
 * move `revision`, so a state folded by the old code is never decided on by the new.
 */
export interface StreamModel<State> {
  readonly name: string;
  readonly revision: number;
  initial(): State;
  evolve(state: State, event: DomainEvent, time: EventTime): State;
  /** How the state is kept in a snapshot; absent: as it is, which must then be plain JSON. */
  readonly snapshot?: SnapshotCodec<State>;
  /**
   * False: never snapshotted. Snapshots seal the personal values a fold met sealed in the log (see
   * `SnapshotSealing`); a state of secrets is still better never written beside the log at all.
   */
  readonly snapshots?: boolean;
  /**
   * Whether a state is small enough to keep in memory between commands; absent: always. A stream an attacker
   * can grow (failed sign-ins) says no past a size, so many such streams cannot fill the api's memory.
   */
  keepable?(state: State): boolean;
}

/** A model from an `evolve` that does not count time. */
export function streamModel<State>(
  name: string,
  revision: number,
  initial: () => State,
  evolve: (state: State, event: DomainEvent) => State,
): StreamModel<State> {
  return { name, revision, initial, evolve: (state, event) => evolve(state, event) };
}

/** How a model's state is kept in a snapshot: as it is (JSON), unless the model says otherwise. */
export interface SnapshotCodec<State> {
  encode(state: State): unknown;
  decode(value: unknown): State;
}

/** The kind of snapshot a model keeps: its name and revision, so another fold's state is never read as its own. */
export function snapshotKind(model: StreamModel<unknown>): string {
  return `${model.name}@${model.revision}`;
}
