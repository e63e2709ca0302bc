import { parseDomainEvent, type ActorKind, type DomainEvent, type EventMetadata, type StreamModel } from '@portcullis/contracts';
import type { ExpectedVersion, StreamRead, StreamWrite } from '../event-store/event-store.ts';
import type { CommandOptions, Loaded } from './command-handler.ts';
import { eventMetadataOf } from './request-metadata.ts';
import type { StateCache } from './state-cache.ts';
import { keepSnapshotIfDue, loadStreams, type SnapshotStore } from './stream-loader.ts';

/**
 * One stream read twice in an attempt (folded by two models) and found at two versions: another writer got
 * in between, as a refused append would say. Retried like one.
 */
export class StreamMovedWithinAttempt extends Error {}

/**
 * Whether a decision requires a stream unchanged at append: `true` (the default) always; `false` never (its
 * later changes cannot undo the decision); `'if-kept'` only when the state decided on was kept from an
 * earlier command rather than read now (a read now is as fresh as the decision needs, while a kept state
 * may be of any age).
 */
type LoadCheck = boolean | 'if-kept';

export interface LoadOptions {
  readonly check?: LoadCheck;
}

interface LoadedStream {
  readonly streamId: string;
  readonly version: number;
  readonly state: unknown;
  readonly model: StreamModel<unknown>;
  readonly check: boolean;
  readonly snapshotVersion: number;
}

interface PendingAppend {
  readonly expected: ExpectedVersion;
  readonly events: DomainEvent[];
  /** How to keep the stream's state after the append, for a stream that was not loaded (a new one). */
  readonly model?: StreamModel<unknown> | undefined;
}

/** One attempt of a command: what it read, at which versions, and what it will append. */
export class UnitOfWork {
  private actorId: string | null;
  private actorKind: ActorKind | undefined;
  /** By model and stream: a stream may be folded by more than one model in one decision. */
  private readonly loaded = new Map<string, LoadedStream>();
  /** The version each stream was read at in this attempt, whatever model folded it. */
  private readonly versions = new Map<string, number>();
  private readonly appends = new Map<string, PendingAppend>();
  private keptStateUsed = false;

  constructor(
    private readonly store: SnapshotStore,
    private readonly states: StateCache,
    /** The time the command is decided at; every event it appends says so. */
    readonly now: Date,
    private readonly options: CommandOptions,
    private readonly fresh: boolean,
    private readonly onSnapshotError: (error: unknown) => void,
  ) {
    this.actorId = options.actorId;
    this.actorKind = options.actorKind;
  }

  /** What every event this attempt appends carries (who, from where, when). */
  get metadata(): EventMetadata {
    return eventMetadataOf(this.options.request, this.actorId, this.now, this.actorKind);
  }

  /** Names the actor once the command has found out who it is (a token's owner, say). */
  actAs(actorId: string, kind?: ActorKind): void {
    this.actorId = actorId;
    if (kind) this.actorKind = kind;
  }

  /** Whether any state this attempt decided on was kept from an earlier command rather than read. */
  get decidedOnKeptState(): boolean {
    return this.keptStateUsed;
  }

  /**
   * A stream's state, kept from an earlier command or folded from the log. Unless `check` is false, the
   * append requires the stream still at this version even when nothing is appended to it: the decision
   * rested on it. A stream whose later changes cannot undo the decision may opt out.
   */
  async load<State>(streamId: string, model: StreamModel<State>, options: LoadOptions = {}): Promise<Loaded<State>> {
    const [loaded] = await this.loadAll([[streamId, model]], options);
    return loaded as Loaded<State>;
  }

  /** Several streams, read in one round trip for those not kept; a spec's own options override `options`. */
  async loadAll<State>(
    specs: ReadonlyArray<readonly [string, StreamModel<State>, LoadOptions?]>,
    options: LoadOptions = {},
  ): Promise<Loaded<State>[]> {
    const toRead: Array<readonly [string, StreamModel<State>, boolean]> = [];
    for (const [streamId, model, own] of specs) {
      const check = own?.check ?? options.check ?? true;
      if (this.loaded.has(stateKey(model, streamId))) continue;
      // An unchecked stream is read every time: nothing would catch a kept state of it being stale.
      let kept = this.fresh || check === false ? undefined : this.states.get(stateKey(model, streamId));
      // Another model's fold of the stream at another version would leave the append two versions to expect.
      const known = this.versions.get(streamId);
      if (kept && known !== undefined && kept.version !== known) kept = undefined;
      if (kept) {
        this.keptStateUsed = true;
        // A kept state is checked whenever it is decided on: it may be of any age.
        this.remember(streamId, model, kept.version, kept.state, true, kept.snapshotVersion);
      } else {
        toRead.push([streamId, model, check === true]);
      }
    }
    if (toRead.length > 0) {
      // From each stream's latest snapshot: a decision's cost does not grow with the stream's history.
      const folded = await loadStreams(this.store, toRead.map(([streamId, model]) => [streamId, model] as const), this.onSnapshotError);
      for (const [streamId, model, check] of toRead) {
        const stream = folded.get(streamId)!;
        this.remember(streamId, model, stream.version, stream.state, check, stream.snapshotVersion);
      }
    }
    return specs.map(([streamId, model]) => {
      const loaded = this.loaded.get(stateKey(model, streamId))!;
      return { streamId, state: loaded.state as State, version: loaded.version };
    });
  }

  /**
   * Events to append to a stream, all in the command's one atomic append. A loaded stream is appended at the
   * version it was loaded at unless `expected` says otherwise; any other stream needs `expected`.
   */
  append(
    streamId: string,
    events: readonly DomainEvent[],
    options: { expected?: ExpectedVersion; model?: StreamModel<unknown> } = {},
  ): void {
    if (events.length === 0) return;
    const existing = this.appends.get(streamId);
    if (existing) {
      existing.events.push(...events);
      return;
    }
    const expected = options.expected ?? this.versions.get(streamId);
    if (expected === undefined) throw new Error(`append to ${streamId}: load it first or say what version it is expected at`);
    this.appends.set(streamId, { expected, events: [...events], model: options.model });
  }

  /** The version a stream was read at in this attempt, or undefined when it was not read. */
  versionOf(streamId: string): number | undefined {
    return this.versions.get(streamId);
  }

  /** The atomic append this attempt decided, or null when it decided nothing. */
  writes(): StreamWrite[] | null {
    if (this.appends.size === 0) return null;
    const metadata = this.metadata;
    const writes: StreamWrite[] = [];
    for (const [streamId, append] of this.appends) {
      writes.push({ streamId, expectedVersion: append.expected, events: append.events.map((e) => ({ type: e.type, data: e.data, metadata })) });
    }
    // Every stream the decision rested on is required unchanged, written to or not (once, whatever folded it).
    const checked = new Set(this.appends.keys());
    for (const loaded of this.loaded.values()) {
      if (!loaded.check || checked.has(loaded.streamId)) continue;
      checked.add(loaded.streamId);
      writes.push({ streamId: loaded.streamId, expectedVersion: loaded.version, events: [] });
    }
    return writes;
  }

  appendedTypes(): ReadonlySet<string> {
    const types = new Set<string>();
    for (const append of this.appends.values()) for (const event of append.events) types.add(event.type);
    return types;
  }

  /** After the append: the appended streams' states at their new versions, for the next command. */
  keepAppended(versions: Readonly<Record<string, number>>): void {
    const time = { occurredAt: this.now.toISOString() };
    for (const [streamId, append] of this.appends) {
      const version = versions[streamId];
      if (version === undefined) continue;
      const folds = [...this.loaded.values()].filter((loaded) => loaded.streamId === streamId);
      if (folds.length === 0) {
        // A stream appended without being loaded is kept only when it is new: its whole history is these events.
        if (!append.model || version !== append.events.length) continue;
        folds.push({ streamId, version: 0, state: append.model.initial(), model: append.model, check: false, snapshotVersion: 0 });
      }
      for (const loaded of folds) {
        let state = loaded.state;
        for (const event of append.events) state = loaded.model.evolve(state, event, time);
        const stream = { state, version, snapshotVersion: loaded.snapshotVersion };
        const snapshotted = keepSnapshotIfDue(this.store, streamId, loaded.model, stream, this.onSnapshotError);
        this.keep(loaded.model, streamId, { version, state, snapshotVersion: snapshotted ? version : stream.snapshotVersion });
      }
    }
    // Streams read but not written are kept too: the next command on them can skip the read.
    for (const loaded of this.loaded.values()) {
      if (this.appends.has(loaded.streamId)) continue;
      this.keep(loaded.model, loaded.streamId, { version: loaded.version, state: loaded.state, snapshotVersion: loaded.snapshotVersion });
    }
  }

  private keep(model: StreamModel<unknown>, streamId: string, kept: { version: number; state: unknown; snapshotVersion: number }): void {
    if (model.keepable && !model.keepable(kept.state)) {
      this.states.delete(stateKey(model, streamId));
      return;
    }
    this.states.set(stateKey(model, streamId), kept);
  }

  /** After a failed attempt: nothing it read may be decided on again without reading it. */
  forgetReads(): void {
    for (const loaded of this.loaded.values()) this.states.delete(stateKey(loaded.model, loaded.streamId));
  }

  private remember(streamId: string, model: StreamModel<unknown>, version: number, state: unknown, check: boolean, snapshotVersion: number): void {
    const known = this.versions.get(streamId);
    if (known !== undefined && known !== version) throw new StreamMovedWithinAttempt(`${streamId} read at ${known} and at ${version}`);
    this.versions.set(streamId, version);
    this.loaded.set(stateKey(model, streamId), { streamId, version, state, model, check, snapshotVersion });
  }
}

function stateKey(model: StreamModel<unknown>, streamId: string): string {
  return `${model.name}@${model.revision}:${streamId}`;
}

/** Folds a stream read from the log; events this reader does not know are skipped (see parseDomainEvent). */
export function fold<State>(model: StreamModel<State>, read: StreamRead): State {
  let state = model.initial();
  for (const recorded of read.events) {
    const event = parseDomainEvent(recorded.type, recorded.data);
    if (event) state = model.evolve(state, event, recorded.metadata);
  }
  return state;
}
