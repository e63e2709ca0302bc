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
import { projectionNames, projectionsToAwait, shownLateBesideSessionCache, type DomainEventType, type ProjectionName } from '@portcullis/contracts';
import { HeldSessionConfirmations, type HeldSessions } from './held-session-confirmations.ts';
import { ProjectionPositions } from './projection-positions.ts';
import { ReadModelTrust, type SessionReadModel } from './read-model-trust.ts';

export type { SessionReadModel } from './read-model-trust.ts';

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
  /** How far behind the log a read model may be and still be believed (see `ReadModelTrust`). */
  readonly maxLagMs: number;
  readonly pollIntervalMs?: number;
  readonly log: { warn(obj: object, message: string): void; info(obj: object, message: string): void };
  /** Monotonic milliseconds; tests move it. */
  readonly now?: () => number;
  /** Data keys another process erased, heard on the checkpoint channel (see `keysErasedIn`). */
  readonly onKeysErased?: (subjectIds: readonly string[]) => void;
}

const DEFAULT_POLL_INTERVAL_MS = 200;

/**
 * How far each read model has applied the log, heard from the projections' notices (Redis pub/sub with Redis,
 * LISTEN/NOTIFY without) and read from their checkpoints with the log's head every `pollIntervalMs` (a lost
 * notice costs latency only), and what follows from it:
 *
 * - read-your-writes: a write waits until the read models its events concern have applied it
 *   (`ProjectionPositions`);
 * - belief: a read model's "this session is live" is believed only while it has applied what the log held
 *   `maxLagMs` ago (`ReadModelTrust`);
 * - revocation: a revocation is answered once its read models have applied it and every api process holding
 *   sessions in memory has heard it (`HeldSessionConfirmations`), or once `maxLagMs` has passed since it
 *   was appended, whichever comes first;
 * - erasure: the data keys another process erased are forgotten as their notice is heard.
 */
export class ReadModelProgress {
  private readonly positions = new ProjectionPositions();
  private readonly trust: ReadModelTrust;
  /** Present with Redis: revocations wait for the processes answering from memory. */
  private readonly held: HeldSessionConfirmations | null;
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

  constructor(private readonly options: ReadModelProgressOptions) {
    this.now = options.now ?? (() => performance.now());
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.trust = new ReadModelTrust(options.maxLagMs, this.pollIntervalMs, this.now);
    this.listener = options.redis ? null : new NotificationListener(options.databaseUrl);
    this.held = options.redis
      ? new HeldSessionConfirmations({ redis: options.redis, maxLagMs: options.maxLagMs, pollIntervalMs: this.pollIntervalMs, now: this.now, log: options.log })
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

  /** Whether a read model's "this session is live" may be believed now (see `ReadModelTrust`). */
  trusted(model: SessionReadModel): boolean {
    return this.trust.trusted(model);
  }

  /** The log's head as last read (a gauge for operators, and for specs to wait on). */
  get logHead(): number {
    return this.trust.logHead;
  }

  /** The lowest position every read model the api reads has reached. */
  get caughtUpTo(): number {
    return this.positions.reached(this.readModels);
  }

  /**
   * Resolves true once `projections` (by default every read model the api reads) have reached `position`,
   * or false after `timeoutMs` (the write stands either way).
   */
  waitFor(position: number, projections: readonly ProjectionName[] = this.readModels, timeoutMs = this.options.timeoutMs): Promise<boolean> {
    return this.positions.waitFor(position, projections, timeoutMs);
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
    const position = await this.options.store.headPosition().catch(() => Math.max(this.positions.of(projectionNames.sessionCache), this.logHead));
    if (this.positions.reached([projectionNames.sessions]) >= position) return;
    await this.hurry(projectionNames.sessions);
    if (!(await this.waitFor(position, [projectionNames.sessions], this.options.maxLagMs))) {
      this.options.log.warn({ position, positions: this.positions.snapshot() }, 'the session table did not catch up in time; listing it as it is');
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
      const held = projections.includes(projectionNames.sessionCache) ? this.held : null;
      held?.announce(position);
      // The processes holding sessions are asked once the session cache has it, while the other read models
      // (the session table) may still be applying it: the answer waits for the later of the two, not both in turn.
      const heardByHolders = held
        ? this.waitFor(position, [projectionNames.sessionCache], this.options.maxLagMs + 1).then((cached) => cached && held.heardEverywhere(position, bound))
        : Promise.resolve(true);
      const [applied, heard] = await Promise.all([this.waitFor(position, projections, this.options.maxLagMs + 1), heardByHolders]);
      if (!applied) this.options.log.info({ position, projections }, 'revocation answered on the staleness bound: read models are behind');
      else if (!heard) this.options.log.info({ position }, 'revocation answered on the staleness bound: a process holding sessions did not confirm it');
      return;
    }
    if (!(await this.waitFor(position, projections))) {
      this.options.log.warn({ position, positions: this.positions.snapshot() }, 'projections did not catch up in time; answering without read-your-writes');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.held?.close();
    if (this.poller) clearInterval(this.poller);
    this.positions.close();
    await this.polling?.catch(() => {});
    await this.listener?.close();
    this.subscriber?.disconnect();
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

  /** `<projection>:<position>`, or `session-cache@<generation>:<position>` for a Redis generation; or an erasure, or a held-sessions notice. */
  private onNotice(payload: string, heardWithInvalidations: boolean): void {
    const erased = keysErasedIn(payload);
    if (erased) {
      this.options.onKeysErased?.(erased);
      return;
    }
    if (this.held?.onNotice(payload)) return;
    const colon = payload.lastIndexOf(':');
    const [name, generation] = payload.slice(0, colon).split('@', 2) as [string, string | undefined];
    const position = Number(payload.slice(colon + 1));
    if (generation !== undefined) {
      if (generation !== this.generation?.keys.generation) return;
      if (heardWithInvalidations) this.held?.heard(position);
    }
    this.advance(name, position);
  }

  private advance(name: string, position: number): void {
    if (this.positions.advance(name, position)) this.updateTrust();
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
    // The head from the log, the checkpoints from the read models' database: side by side, so a poll waits
    // for the slower of the two reads, not for both. Which of them is read first does not matter: a head
    // counts from `at` on, and a checkpoint read later is only further on.
    const [head, checkpoints] = await Promise.all([
      this.options.store.headPosition(),
      this.options.pool.oneFirst(sql.unsafe`SELECT coalesce(json_object_agg(name, position), '{}'::json) FROM projection_checkpoints`) as Promise<
        Record<string, number | string>
      >,
    ]);
    for (const [name, position] of Object.entries(checkpoints)) this.advance(name, Number(position));
    if (this.options.redis) await this.pollRedis(this.options.redis);
    this.trust.sampleHead(at, head);
    this.updateTrust();
  }

  private async pollRedis(redis: NonNullable<ReadModelProgressOptions['redis']>): Promise<void> {
    const pointer = parsePointer(await redis.client.get(redis.layout.pointerKey));
    if (pointer.current !== (this.generation?.keys.generation ?? null)) {
      // Another generation is served now: entries held from the old one are of no use any more.
      this.held?.restart();
      if (pointer.current === null && this.generation?.verified) this.cacheLost();
      this.positions.forget(projectionNames.sessionCache);
      this.generation = pointer.current === null ? null : { keys: redis.layout.generation(pointer.current), verified: false };
    }
    const generation = this.generation;
    if (!generation) return;
    const checkpoint = parseCacheCheckpoint(await redis.client.get(generation.keys.checkpoint));
    if (checkpoint === null) {
      // The generation's checkpoint is gone (Redis lost its data): nothing of it is to be read.
      if (generation.verified) this.cacheLost();
      this.generation = null;
      this.positions.forget(projectionNames.sessionCache);
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
    if (redis.held && (await redis.held.roundTrip()) && this.generation === generation) this.held?.heard(checkpoint.position);
    await this.held?.renew();
  }

  /**
   * The served generation is gone (Redis lost its data) and the projector replays the log into a new one.
   * Writes then wait for the Postgres read models, which get-session reads meanwhile (`forget` lets those
   * already waiting stop waiting for the cache too), and the session table is asked for the sessions it
   * holds back beside the cache (see `shownLateBesideSessionCache`): nobody waits for a cache rebuilding.
   */
  private cacheLost(): void {
    this.options.log.warn({ generation: this.generation?.keys.generation }, 'the Redis session cache was lost; reading Postgres until a new generation is served');
    void this.hurry(projectionNames.sessions);
  }

  private updateTrust(): void {
    this.trust.update({
      sessions: this.positions.of(projectionNames.sessions),
      redis: this.redisKeys === null ? null : this.positions.of(projectionNames.sessionCache),
      held: this.held?.held ?? null,
    });
  }
}
