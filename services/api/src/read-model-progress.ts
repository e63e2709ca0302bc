import { performance } from 'node:perf_hooks';
import {
  CHECKPOINT_CHANNEL,
  createRedisClient,
  hurryRequest,
  keysErasedIn,
  NotificationListener,
  parseCacheCheckpoint,
  parsePointer,
  PROJECTION_CONTROL_CHANNEL,
  sql,
  type DatabasePool,
  type EventStore,
  type Redis,
  type SessionCacheKeys,
  type SessionCacheLayout,
  type Settlement,
} from '@portcullis/platform';
import { randomBytes } from 'node:crypto';
import { projectionNames, projectionsToAwait, shownLateBesideSessionCache, type DomainEventType, type ProjectionName } from '@portcullis/contracts';
import { HeldReaders } from './session/held-readers.ts';

/** A pub/sub connection already open for something else, that can hear one more channel. */
interface NoticeSource {
  listen(channel: string, onMessage: (payload: string) => void): Promise<void>;
}

/** The in-process session cache, as far as progress is concerned (see LocalSessionCache). */
interface HeldSessions extends NoticeSource {
  readonly isLive: boolean;
  clear(): void;
  /** Resolves true once every invalidation of what Redis had applied at the call has reached the process. */
  roundTrip(): Promise<boolean>;
}

/** Where get-session may find a session, fastest first: held in this process, the Redis cache, the session table. */
export type SessionReadModel = 'held' | 'redis' | 'sessions';

interface Waiter {
  readonly position: number;
  readonly projections: readonly ProjectionName[];
  readonly resolve: (caughtUp: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

/** The log's head as read at a moment (monotonic ms, taken when the read began). */
interface HeadSample {
  readonly at: number;
  readonly head: number;
}

export interface ReadModelProgressOptions {
  readonly pool: DatabasePool;
  readonly databaseUrl: string;
  readonly store: Pick<EventStore, 'eventIdAt' | 'headPosition'>;
  readonly redis: {
    readonly client: Redis;
    readonly url: string;
    readonly layout: SessionCacheLayout;
    /**
     * The in-process session cache's subscriber: notices heard there arrive behind the invalidations of the
     * batch they announce, so they alone tell how far the entries held in the process are up to date.
     */
    readonly held?: HeldSessions | undefined;
  } | null;
  /** How long a write waits for the read models before answering anyway (read-your-writes). */
  readonly timeoutMs: number;
  /** How far behind the log a read model may be and still be believed (see `trusted`). */
  readonly maxLagMs: number;
  readonly pollIntervalMs?: number;
  readonly log: { warn(obj: object, message: string): void; info(obj: object, message: string): void };
  /** Monotonic milliseconds; tests move it. */
  readonly now?: () => number;
  /** Data keys another process erased, heard on the checkpoint channel (see `keysErasedIn`). */
  readonly onKeysErased?: (subjectIds: readonly string[]) => void;
}

const DEFAULT_POLL_INTERVAL_MS = 200;
/** Notices on the checkpoint channel between api processes holding sessions (see `HeldReaders`). */
const HELD_WANTED = 'held-wanted';
const HELD_HEARD = 'held-heard';
/** Kept off a registration's life when deciding how long this process may trust what it holds. */
const REGISTRATION_MARGIN_MS = 100;

/**
 * How far each read model has applied the log, and what follows from it:
 *
 * - read-your-writes: a write waits until the read models its events concern have applied it;
 * - trust: a read model is believed when it says a session is live only while it has applied everything
 *   the log held `maxLagMs` ago. The api reads the log's head every `pollIntervalMs`; a read model whose
 *   checkpoint is at or past a head read within the last `maxLagMs` is trusted. A stuck, lagging, flushed
 *   or rebuilding read model stops being believed within `maxLagMs`, and get-session then confirms sessions
 *   on the log itself. A process that cannot read the head believes nothing after `maxLagMs` either.
 * - revocation: so a revocation is effective on every api process once its read models have applied it,
 *   or once `maxLagMs` has passed since it was appended, whichever comes first; it is answered then.
 */
export class ReadModelProgress {
  private readonly positions = new Map<ProjectionName, number>();
  private readonly waiters = new Set<Waiter>();
  private readonly samples: HeadSample[] = [];
  /** Without Redis only: a LISTENing backend is woken by every NOTIFY in the database, each append's too. */
  private readonly listener: NotificationListener | null;
  private subscriber: Redis | null = null;
  private poller: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private closed = false;
  private readonly now: () => number;
  private readonly pollIntervalMs: number;
  /** The Redis generation readers use, once its checkpoint is known to name an event of this log. */
  private generation: { readonly keys: SessionCacheKeys; verified: boolean } | null = null;
  /** The session cache's checkpoint as announced on the held cache's subscriber (see options). */
  private heldPosition = 0;
  /** This process among those holding sessions, when it holds any (see `HeldReaders`). */
  private readonly heldReaders: HeldReaders | null;
  /** Until when (monotonic ms) this process's registration among them stands. */
  private registeredUntil = 0;
  /** The highest position a revocation somewhere waits for this process to have heard. */
  private heldWanted = 0;
  private heldConfirmed = 0;
  private confirming: Promise<void> | null = null;
  /** Revocations waiting for processes holding sessions to hear them; woken by each confirmation. */
  private readonly heardWaiters = new Set<() => void>();
  private readonly trustedUntil: Record<SessionReadModel, number> = { held: 0, redis: 0, sessions: 0 };

  constructor(private readonly options: ReadModelProgressOptions) {
    this.now = options.now ?? (() => performance.now());
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.listener = options.redis ? null : new NotificationListener(options.databaseUrl);
    const redis = options.redis;
    // Registrations outlive a few missed polls but not the staleness bound twice over.
    this.heldReaders = redis
      ? new HeldReaders(redis.client, redis.layout.heldReaders, randomBytes(8).toString('hex'), Math.max(2 * options.maxLagMs, 5 * this.pollIntervalMs))
      : null;
    void this.listener?.listen(CHECKPOINT_CHANNEL, { onNotification: (payload) => this.onNotice(payload, false) });
  }

  async start(): Promise<void> {
    await this.listener?.start();
    await this.listenToRedis();
    await this.poll();
    this.poller = setInterval(() => void this.poll(), this.pollIntervalMs);
    this.poller.unref();
  }

  /** The read models the api reads: the Redis cache only while a verified generation of it is served. */
  get readModels(): readonly ProjectionName[] {
    return [
      projectionNames.identity,
      projectionNames.sessions,
      projectionNames.organizations,
      ...(this.redisKeys ? [projectionNames.sessionCache] : []),
    ];
  }

  /** The keys of the Redis generation to read sessions from, or null when Redis is not to be read. */
  get redisKeys(): SessionCacheKeys | null {
    return this.generation?.verified ? this.generation.keys : null;
  }

  /** Whether a read model's "this session is live" may be believed now (see the class comment). */
  trusted(model: SessionReadModel): boolean {
    return this.now() < this.trustedUntil[model];
  }

  /** The log's head as last read (a gauge for operators, and for specs to wait on). */
  get logHead(): number {
    return this.samples.at(-1)?.head ?? 0;
  }

  /** The lowest position every read model the api reads has reached. */
  get caughtUpTo(): number {
    return this.reached(this.readModels);
  }

  /**
   * Resolves true once `projections` (by default every read model the api reads) have reached `position`,
   * or false after `timeoutMs` (the write stands either way).
   */
  waitFor(position: number, projections: readonly ProjectionName[] = this.readModels, timeoutMs = this.options.timeoutMs): Promise<boolean> {
    if (this.reached(projections) >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        position,
        projections,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /**
   * Resolves once the session table has applied the log's head as read now: the table then lists every
   * session a client was told of, on whichever api process it signed in, though a sign-in does not wait for
   * the table while the cache is served (`shownLateBesideSessionCache`). The projector is hurried for it; a
   * table still behind after `maxLagMs` (a stopped projector) is listed as it is.
   */
  async sessionTableCaughtUp(): Promise<void> {
    if (!this.readModels.includes(projectionNames.sessionCache)) return;
    // Read now rather than taken from the last poll: a sign-in answered by another process a moment ago may
    // be past both that poll and the session cache's notices this process has heard.
    const position = await this.options.store.headPosition().catch(() => Math.max(this.positions.get(projectionNames.sessionCache) ?? 0, this.logHead));
    if (this.reached([projectionNames.sessions]) >= position) return;
    await this.hurry(projectionNames.sessions);
    if (!(await this.waitFor(position, [projectionNames.sessions], this.options.maxLagMs))) {
      this.options.log.warn({ position, positions: Object.fromEntries(this.positions) }, 'the session table did not catch up in time; listing it as it is');
    }
  }

  /** Asks the projector for what it holds back of `projection` (see `shownLateBesideSessionCache`). */
  private async hurry(projection: ProjectionName): Promise<void> {
    await this.options.pool
      .query(sql.unsafe`SELECT pg_notify(${PROJECTION_CONTROL_CHANNEL}, ${hurryRequest(projection)})`)
      .catch((error: unknown) => this.options.log.warn({ err: error, projection }, 'could not hurry a projection; waiting for it anyway'));
  }

  /** What a command waits for after its append (see `Settlement`). */
  async settle(position: number, eventTypes: ReadonlySet<string>, settlement: Exclude<Settlement, 'none'>): Promise<void> {
    const projections = projectionsToAwait(eventTypes, this.readModels);
    if (projections.length === 0) return;
    // The session cache is not served (Redis lost, or a generation not yet verified), yet the projector may
    // still hold new sessions back from the table, which get-session reads meanwhile.
    const late = shownLateBesideSessionCache[projectionNames.sessions];
    if (projections.includes(projectionNames.sessions) && late && [...eventTypes].some((type) => late.has(type as DomainEventType))) {
      void this.hurry(projectionNames.sessions);
    }
    if (settlement === 'revocation') {
      // Past `maxLagMs` after the append, no api process believes a read model that has not applied it.
      const bound = this.now() + this.options.maxLagMs + 1;
      const applied = await this.waitFor(position, projections, this.options.maxLagMs + 1);
      if (!applied) {
        this.options.log.info({ position, projections }, 'revocation answered on the staleness bound: read models are behind');
        return;
      }
      if (projections.includes(projectionNames.sessionCache) && !(await this.heardEverywhere(position, bound))) {
        this.options.log.info({ position }, 'revocation answered on the staleness bound: a process holding sessions did not confirm it');
      }
      return;
    }
    if (!(await this.waitFor(position, projections))) {
      this.options.log.warn({ position, positions: Object.fromEntries(this.positions) }, 'projections did not catch up in time; answering without read-your-writes');
    }
  }

  /**
   * Resolves true once every api process holding sessions in process has heard the session cache's
   * invalidations up to `position`, false at `bound` (when none of them believes what it holds any more).
   */
  private async heardEverywhere(position: number, bound: number): Promise<boolean> {
    const readers = this.heldReaders;
    if (!readers) return true;
    let asked = false;
    for (;;) {
      const heard = new Promise<void>((resolve) => this.heardWaiters.add(resolve));
      // Having heard it here already (the usual case: its notice is what woke this wait), this process
      // says so in the round trip that asks who has not, rather than being found behind and asked.
      const vouching = this.options.redis?.held?.isLive === true && this.heldPosition >= position;
      const behind = await (vouching ? this.registerHeld(readers, this.heldPosition, position) : readers.behind(position)).catch(() => null);
      // Redis unreachable: nobody can renew a registration, so waiting out the bound is the answer.
      if (behind !== null && behind.length === 0) return true;
      if (!asked && behind !== null) {
        asked = true;
        await this.options.redis!.client.publish(this.options.redis!.layout.checkpointChannel, `${HELD_WANTED}:${position}`).catch(() => {});
      }
      const left = bound - this.now();
      if (left <= 0) return false;
      await Promise.race([heard, new Promise<void>((resolve) => setTimeout(resolve, Math.min(left, this.pollIntervalMs)))]);
    }
  }

  /** Tells the processes waiting on revocations how far this one has heard, once it has heard what they want. */
  private confirmHeld(): void {
    if (!this.heldReaders || this.confirming || this.heldWanted <= this.heldConfirmed || this.heldPosition < this.heldWanted) return;
    const position = this.heldPosition;
    const readers = this.heldReaders;
    const redis = this.options.redis!;
    this.confirming = (async () => {
      await this.registerHeld(readers, position);
      this.heldConfirmed = Math.max(this.heldConfirmed, position);
      await redis.client.publish(redis.layout.checkpointChannel, `${HELD_HEARD}:${position}`);
    })()
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'could not confirm the session invalidations heard; revocations wait out the staleness bound'))
      .finally(() => {
        this.confirming = null;
        this.confirmHeld();
      });
  }

  /** Renews this process's registration among those holding sessions (while it holds any). */
  private async renewHeld(): Promise<void> {
    const readers = this.heldReaders;
    if (!readers) return;
    if (!this.options.redis?.held?.isLive) {
      this.registeredUntil = 0;
      return;
    }
    try {
      await this.registerHeld(readers, this.heldPosition);
    } catch (error) {
      this.options.log.warn({ err: error }, 'could not renew this process among those holding sessions; not answering from them');
    }
  }

  /**
   * Registers this process as having heard up to `position`. A registration that had lapsed drops what the
   * process held: a revocation answered meanwhile did not wait for this process, and what it held from
   * before may be what that revocation ended. Reads sent after the registration see every such revocation.
   */
  private async registerHeld(readers: HeldReaders, position: number): Promise<void>;
  /** The same, answering in the same round trip which registered processes have not heard `behindOf`. */
  private async registerHeld(readers: HeldReaders, position: number, behindOf: number): Promise<string[]>;
  private async registerHeld(readers: HeldReaders, position: number, behindOf?: number): Promise<string[] | void> {
    const sentAt = this.now();
    const standing = this.registeredUntil > sentAt;
    let behind: string[] | undefined;
    if (behindOf === undefined) await readers.register(position);
    else behind = await readers.registerAndBehind(position, behindOf);
    if (!standing) this.options.redis?.held?.clear();
    this.registeredUntil = Math.max(this.registeredUntil, sentAt + readers.ttlMs - REGISTRATION_MARGIN_MS);
    return behind;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.heardWaiters) wake();
    this.heardWaiters.clear();
    await this.heldReaders?.leave().catch(() => {});
    if (this.poller) clearInterval(this.poller);
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters.clear();
    await this.polling?.catch(() => {});
    await this.listener?.close();
    this.subscriber?.disconnect();
  }

  private reached(projections: readonly ProjectionName[]): number {
    let lowest = Number.POSITIVE_INFINITY;
    for (const name of projections) lowest = Math.min(lowest, this.positions.get(name) ?? 0);
    return lowest;
  }

  /**
   * Projections announce each move of their checkpoint on Redis pub/sub when there is Redis. Pub/sub
   * delivers at most once, so a lost notice costs a poll interval, not correctness.
   */
  private async listenToRedis(): Promise<void> {
    const redis = this.options.redis;
    if (!redis) return;
    const channel = redis.layout.checkpointChannel;
    if (redis.held) {
      await redis.held.listen(channel, (payload) => this.onNotice(payload, true));
      return;
    }
    // RESP2: ioredis hands pub/sub messages on as events there.
    const subscriber = createRedisClient(redis.url, { name: 'portcullis-api-checkpoints', protocol: 2 });
    subscriber.on('error', () => {});
    subscriber.on('message', (_channel: string, payload: string) => this.onNotice(payload, false));
    this.subscriber = subscriber;
    await subscriber.subscribe(channel);
  }

  /** `<projection>:<position>`, or `session-cache@<generation>:<position>` for a Redis generation. */
  private onNotice(payload: string, heardWithInvalidations: boolean): void {
    const erased = keysErasedIn(payload);
    if (erased) {
      this.options.onKeysErased?.(erased);
      return;
    }
    if (payload.startsWith(`${HELD_WANTED}:`)) {
      this.heldWanted = Math.max(this.heldWanted, Number(payload.slice(HELD_WANTED.length + 1)));
      this.confirmHeld();
      return;
    }
    if (payload.startsWith(`${HELD_HEARD}:`)) {
      for (const wake of this.heardWaiters) wake();
      this.heardWaiters.clear();
      return;
    }
    const colon = payload.lastIndexOf(':');
    const [name, generation] = payload.slice(0, colon).split('@', 2) as [string, string | undefined];
    const position = Number(payload.slice(colon + 1));
    if (generation === undefined) {
      this.advance(name, position);
      return;
    }
    if (generation !== this.generation?.keys.generation) return;
    if (heardWithInvalidations && position > this.heldPosition) {
      this.heldPosition = position;
      this.confirmHeld();
    }
    this.advance(name, position);
  }

  private advance(name: string, position: number): void {
    if (!(Object.values(projectionNames) as string[]).includes(name)) return;
    const projection = name as ProjectionName;
    if ((this.positions.get(projection) ?? 0) >= position) return;
    this.positions.set(projection, position);
    this.updateTrust();
    for (const waiter of this.waiters) {
      if (waiter.projections.includes(projection) && waiter.position <= this.reached(waiter.projections)) {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        waiter.resolve(true);
      }
    }
  }

  private poll(): Promise<void> {
    this.polling ??= this.pollOnce()
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'could not read the log head and checkpoints; trusting no read model until it can'))
      .finally(() => {
        this.polling = null;
      });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    if (this.closed) return;
    // Taken before the read: everything acknowledged before this moment is at or below the head it returns.
    const at = this.now();
    const row = (await this.options.pool.one(sql.unsafe`
      SELECT (SELECT position FROM event_log_head) AS head,
             (SELECT coalesce(json_object_agg(name, position), '{}'::json) FROM projection_checkpoints) AS checkpoints`)) as {
      head: number | string;
      checkpoints: Record<string, number | string>;
    };
    for (const [name, position] of Object.entries(row.checkpoints)) this.advance(name, Number(position));
    if (this.options.redis) await this.pollRedis(this.options.redis);
    this.samples.push({ at, head: Number(row.head) });
    // Older samples can no longer make anything trusted.
    const horizon = this.now() - this.options.maxLagMs - this.pollIntervalMs;
    while (this.samples.length > 2 && this.samples[0]!.at < horizon) this.samples.shift();
    this.updateTrust();
  }

  private async pollRedis(redis: NonNullable<ReadModelProgressOptions['redis']>): Promise<void> {
    const pointer = parsePointer(await redis.client.get(redis.layout.pointerKey));
    if (pointer.current !== (this.generation?.keys.generation ?? null)) {
      // Another generation is served now: entries held from the old one are of no use any more.
      redis.held?.clear();
      this.heldPosition = 0;
      this.positions.delete(projectionNames.sessionCache);
      this.generation = pointer.current === null ? null : { keys: redis.layout.generation(pointer.current), verified: false };
    }
    const generation = this.generation;
    if (!generation) return;
    const checkpoint = parseCacheCheckpoint(await redis.client.get(generation.keys.checkpoint));
    if (checkpoint === null) {
      // The generation's checkpoint is gone (Redis lost its data): nothing of it is to be read.
      this.generation = null;
      return;
    }
    if (!generation.verified) {
      // A cache built from another history (a database restored from an older backup) names, at its
      // checkpoint, an event this log does not hold there: it is not read until a new generation replaces it.
      generation.verified =
        checkpoint.position === 0 || (checkpoint.eventId !== null && (await this.options.store.eventIdAt(checkpoint.position)) === checkpoint.eventId);
      if (!generation.verified) this.options.log.warn({ generation: generation.keys.generation }, 'the Redis session cache was built from another history; not reading it');
    }
    this.advance(projectionNames.sessionCache, checkpoint.position);
    // The entries held in process are as current as this checkpoint once its invalidations have arrived;
    // notices make that known sooner, but an idle projector sends none.
    if (redis.held && (await redis.held.roundTrip()) && this.generation === generation && checkpoint.position > this.heldPosition) {
      this.heldPosition = checkpoint.position;
      this.confirmHeld();
    }
    await this.renewHeld();
  }

  /** For each read model: until when (monotonic ms) its checkpoint covers a head read within `maxLagMs`. */
  private updateTrust(): void {
    const coveredUntil = (checkpoint: number): number => {
      let until = 0;
      for (const sample of this.samples) {
        if (sample.head > checkpoint) break;
        until = sample.at + this.options.maxLagMs;
      }
      return until;
    };
    this.trustedUntil.sessions = coveredUntil(this.positions.get(projectionNames.sessions) ?? 0);
    const redisUsable = this.redisKeys !== null;
    this.trustedUntil.redis = redisUsable ? coveredUntil(this.positions.get(projectionNames.sessionCache) ?? 0) : 0;
    // Only while registered: a revocation waits for the processes registered, and for no other.
    this.trustedUntil.held =
      redisUsable && this.options.redis?.held?.isLive ? Math.min(coveredUntil(this.heldPosition), this.registeredUntil) : 0;
  }
}
