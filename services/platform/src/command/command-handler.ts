import { DomainError, parseDomainEvent, type ActorKind, type DomainEvent, type EventMetadata } from '@portcullis/contracts';
import {
  WrongExpectedVersionError,
  type EventStore,
  type ExpectedVersion,
  type StreamRead,
  type StreamWrite,
} from '../event-store/event-store.ts';
import { keepSnapshotIfDue, loadStreams, type SnapshotStore } from './stream-loader.ts';
import { KeyedQueue } from './keyed-queue.ts';
import { eventMetadataOf, type RequestMetadata } from './request-metadata.ts';
import { StateCache } from './state-cache.ts';
import type { StreamModel } from '@portcullis/contracts';
import { inSpan, instruments } from '../telemetry/telemetry.ts';

const commandMetrics = instruments((meter) => ({
  runs: meter.createCounter('portcullis.commands', { description: 'Commands run, by name and outcome' }),
  conflicts: meter.createCounter('portcullis.command.conflicts', { description: 'Appends refused for a stream another writer moved' }),
  duration: meter.createHistogram('portcullis.command.duration', { unit: 'ms', description: 'From the first load to the settled answer' }),
}));

export interface Loaded<State> {
  readonly streamId: string;
  readonly state: State;
  /** The stream's version the state was folded at: what an append to it expects. */
  readonly version: number;
}

/**
 * What a command's appended events must have reached before it answers. `write`: the read models they
 * concern (read-your-writes). `revocation`: also, or else long enough that no api process can still answer
 * an ended session from a read model that missed it.
 */
export type Settlement = 'write' | 'revocation' | 'none';

export interface CommandOptions {
  /** What traces and metrics call the command (`sign-out`, `organization.create`, …): every command has one. */
  readonly name: string;
  readonly request: RequestMetadata;
  /** The user who acts (an admin's own id when an admin acts on someone else), or null. */
  readonly actorId: string | null;
  /**
   * What kind of actor `actorId` is, where the request cannot tell (`admin`: a user acting with admin
   * rights). Left out, it is derived (see `actorFor`): existing callers passing only `actorId` stay right.
   */
  readonly actorKind?: ActorKind;
  /**
   * Streams this process runs one command at a time on (the command's own aggregate): commands of one
   * process then never conflict with each other, only with other processes'.
   */
  readonly serialize?: readonly string[];
  /** Default `write`. */
  readonly settle?: Settlement;
  /** Attempts before a persistent conflict is a 409, where many writers normally race on one stream. */
  readonly attempts?: number;
}

export interface CommandOutcome<T> {
  readonly result: T;
  /** Log position of the last event appended, or null when the command decided nothing. */
  readonly position: number | null;
}

export interface CommandHandlerOptions {
  readonly store: Pick<EventStore, 'append'> & SnapshotStore;
  /** A snapshot that could not be kept (the next load folds further; nothing is lost). */
  readonly onSnapshotError?: (error: unknown) => void;
  readonly clock: () => Date;
  /** Waits as `Settlement` says for an append whose last event is at `position`. */
  readonly settle: (position: number, eventTypes: ReadonlySet<string>, settlement: Exclude<Settlement, 'none'>) => Promise<void>;
  /** States kept between commands; 0 turns keeping them off. */
  readonly stateCacheSize?: number;
  /** Attempts before a persistent conflict is answered with 409. */
  readonly maxAttempts?: number;
  /** Backoff after the n-th conflict: a random wait up to min(cap, base * 2^n) ms ("full jitter"). */
  readonly backoff?: { readonly baseMs: number; readonly capMs: number };
  readonly random?: () => number;
  /**
   * How many other commands of this process are sure to append soon, told with each append
   * (`AppendOptions.othersUnderWay`) so the projector may project them together. Only commands held up by
   * work that keeps the CPU busy anyway belong here (a password being hashed): making followers wait for a
   * quick command only idles its clients.
   */
  readonly othersUnderWay?: () => number;
}

const DEFAULT_STATE_CACHE_SIZE = 50_000;
const DEFAULT_MAX_ATTEMPTS = 10;
const DEFAULT_BACKOFF = { baseMs: 2, capMs: 100 } as const;

/** A kept state that turned out stale (or a read that must be fresh): decide again on what the log holds. */
class DecideOnFreshReads extends Error {}

/**
 * One stream read twice in an attempt (folded by two models) and found at two versions: another writer got
 * in between, as a refused append would say. Retried like one.
 */
class StreamMovedWithinAttempt extends Error {}

/**
 * The one way every write happens (emmett's `CommandHandler`): load the streams a decision needs, decide
 * (pure), append what it decided with the versions it decided on, and wait for the read models the events
 * concern. A conflict with another writer is retried on fresh reads after a jittered wait, and one that
 * persists is a 409, never a 500. Framework-free: routes, CLIs and specs all run commands through it.
 */
export class CommandHandler {
  private readonly states: StateCache;
  private readonly queue = new KeyedQueue();
  private readonly maxAttempts: number;
  private readonly backoff: { readonly baseMs: number; readonly capMs: number };
  private readonly random: () => number;

  constructor(private readonly options: CommandHandlerOptions) {
    this.states = new StateCache(options.stateCacheSize ?? DEFAULT_STATE_CACHE_SIZE);
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.random = options.random ?? Math.random;
  }

  handle<T>(options: CommandOptions, work: (unit: UnitOfWork) => Promise<T>): Promise<CommandOutcome<T>> {
    const command = options.name;
    return inSpan(`command ${command}`, { 'portcullis.command': command }, async (span) => {
      const started = performance.now();
      let outcome = 'ok';
      try {
        const done = await this.queue.run(options.serialize ?? [], () => this.attempt(options, work, command));
        span.setAttribute('portcullis.command.position', done.position ?? -1);
        return done;
      } catch (error) {
        outcome = error instanceof DomainError ? error.code : 'error';
        throw error;
      } finally {
        commandMetrics().runs.add(1, { command, outcome });
        commandMetrics().duration.record(performance.now() - started, { command });
      }
    });
  }

  /** States kept between commands (a gauge, and for tests). */
  get keptStates(): number {
    return this.states.size;
  }

  private async attempt<T>(options: CommandOptions, work: (unit: UnitOfWork) => Promise<T>, command: string): Promise<CommandOutcome<T>> {
    let fresh = false;
    for (let attempt = 1; ; attempt += 1) {
      const unit = new UnitOfWork(this.options.store, this.states, this.options.clock(), options, fresh, this.options.onSnapshotError ?? (() => {}));
      try {
        const result = await work(unit);
        const writes = unit.writes();
        if (writes === null) {
          // Nothing to write, decided on a kept state: a stale one might have hidden something to do.
          if (unit.decidedOnKeptState) throw new DecideOnFreshReads();
          return { result, position: null };
        }
        const settlement = options.settle ?? 'write';
        // A revocation is never held back for a batch: its answer waits for it to take effect everywhere.
        const othersUnderWay = settlement === 'revocation' ? 0 : (this.options.othersUnderWay?.() ?? 0);
        const appended = await this.options.store.append(writes, { othersUnderWay });
        unit.keepAppended(appended.versions);
        if (settlement !== 'none') await this.options.settle(appended.position, unit.appendedTypes(), settlement);
        return { result, position: appended.position };
      } catch (error) {
        unit.forgetReads();
        if (error instanceof DecideOnFreshReads || (error instanceof DomainError && unit.decidedOnKeptState)) {
          // A refusal or a no-op decided on a kept state: decide once more on what the log holds.
          if (fresh) throw error instanceof DomainError ? error : new Error('a decision on fresh reads asked for fresh reads');
          fresh = true;
          continue;
        }
        if (!(error instanceof WrongExpectedVersionError || error instanceof StreamMovedWithinAttempt)) throw error;
        commandMetrics().conflicts.add(1, { command });
        fresh = true;
        if (attempt >= (options.attempts ?? this.maxAttempts)) throw new DomainError('CONFLICT', { cause: error });
        await sleep(this.random() * Math.min(this.backoff.capMs, this.backoff.baseMs * 2 ** attempt));
      }
    }
  }
}

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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
