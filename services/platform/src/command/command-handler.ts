import { DomainError, type ActorKind } from '@portcullis/contracts';
import { WrongExpectedVersionError, type EventStore } from '../event-store/event-store.ts';
import type { SnapshotStore } from './stream-loader.ts';
import { KeyedQueue } from './keyed-queue.ts';
import type { RequestMetadata } from './request-metadata.ts';
import { StateCache } from './state-cache.ts';
import { StreamMovedWithinAttempt, UnitOfWork } from './unit-of-work.ts';
import { inSpanOfRequest, instruments } from '../telemetry/telemetry.ts';

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
    return inSpanOfRequest(options.request.traceparent, `command ${command}`, { 'portcullis.command': command }, async (span) => {
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
