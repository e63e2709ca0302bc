import { CHECKPOINT_CHANNEL, createRedisClient, NotificationListener, sql, type DatabasePool, type Redis, type SessionCacheKeys } from '@portcullis/platform';
import { projectionNames, type ProjectionName } from '@portcullis/contracts';

/** A pub/sub connection already open for something else, that can hear one more channel. */
export interface NoticeSource {
  listen(channel: string, onMessage: (payload: string) => void): Promise<void>;
}

interface Waiter {
  readonly position: number;
  readonly projections: readonly ProjectionName[];
  readonly resolve: (caughtUp: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Read-your-writes: lets a handler wait until the projections its answer depends on have applied the
 * position it appended. Projectors announce progress on Redis pub/sub when the deployment has Redis, else
 * over LISTEN/NOTIFY; while anyone waits, the stored checkpoints are also re-read on a short interval, so a
 * lost notice costs latency, not correctness.
 */
export class ProjectionWaiter {
  private readonly positions = new Map<ProjectionName, number>();
  private readonly waiters = new Set<Waiter>();
  /** Only without Redis: a LISTENing backend is woken by every NOTIFY in the database, each append's too. */
  private readonly listener: NotificationListener | null;
  private redisListener: Redis | null = null;
  private poller: NodeJS.Timeout | null = null;
  private closed = false;
  readonly projections: readonly ProjectionName[];

  constructor(
    private readonly options: {
      pool: DatabasePool;
      databaseUrl: string;
      redis: {
        client: Redis;
        url: string;
        keys: SessionCacheKeys;
        /** A subscriber to hear the notices on (the local session cache's); absent, the waiter opens its own. */
        notices?: NoticeSource | undefined;
      } | null;
      timeoutMs: number;
      onTimeout: (position: number, positions: Record<string, number>) => void;
    },
  ) {
    this.projections = [
      projectionNames.identity,
      projectionNames.sessions,
      projectionNames.organizations,
      ...(options.redis ? [projectionNames.sessionCache] : []),
    ];
    this.listener = options.redis ? null : new NotificationListener(options.databaseUrl);
    void this.listener?.listen(CHECKPOINT_CHANNEL, { onNotification: (payload) => this.advanceFromNotice(payload) });
  }

  async start(): Promise<void> {
    await this.listener?.start();
    await this.listenToRedis();
    await this.refresh();
  }

  /** The lowest position every required projection has reached. */
  get caughtUpTo(): number {
    return this.reached(this.projections);
  }

  private reached(projections: readonly ProjectionName[]): number {
    let lowest = Number.POSITIVE_INFINITY;
    for (const name of projections) lowest = Math.min(lowest, this.positions.get(name) ?? 0);
    return lowest;
  }

  /**
   * Resolves true once `projections` (by default all the api reads from; otherwise some of those, as
   * `commit` picks them) have reached `position`, or false after the timeout (the write stands either way).
   */
  waitFor(position: number, projections: readonly ProjectionName[] = this.projections): Promise<boolean> {
    if (this.reached(projections) >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        position,
        projections,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          this.options.onTimeout(position, Object.fromEntries(this.positions));
          resolve(false);
        }, this.options.timeoutMs),
      };
      this.waiters.add(waiter);
      this.ensurePolling();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.poller) clearInterval(this.poller);
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters.clear();
    await this.listener?.close();
    this.redisListener?.disconnect();
  }

  /**
   * With Redis, every projection publishes each move of its checkpoint once the move is made. Pub/sub
   * delivers at most once, so a message lost to a reconnect costs one poll interval, not correctness.
   */
  private async listenToRedis(): Promise<void> {
    if (!this.options.redis) return;
    const { url, keys, notices } = this.options.redis;
    if (notices) {
      await notices.listen(keys.checkpointChannel, (payload) => this.advanceFromNotice(payload));
      return;
    }
    // RESP2: ioredis hands pub/sub messages on as events there.
    const subscriber = createRedisClient(url, { name: 'portcullis-api-checkpoints', protocol: 2 });
    subscriber.on('error', () => {});
    subscriber.on('message', (_channel: string, payload: string) => this.advanceFromNotice(payload));
    this.redisListener = subscriber;
    await subscriber.subscribe(keys.checkpointChannel);
  }

  private advanceFromNotice(payload: string): void {
    const colon = payload.lastIndexOf(':');
    this.advance(payload.slice(0, colon), Number(payload.slice(colon + 1)));
  }

  private advance(name: string, position: number): void {
    if (!(this.projections as readonly string[]).includes(name)) return;
    // A rebuild moves a checkpoint back to 0; take the value as it is so waiters wait for the replay.
    this.positions.set(name as ProjectionName, position);
    for (const waiter of this.waiters) {
      if (waiter.projections.includes(name as ProjectionName) && waiter.position <= this.reached(waiter.projections)) {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        waiter.resolve(true);
      }
    }
  }

  private async refresh(): Promise<void> {
    const rows = (await this.options.pool.any(sql.unsafe`
      SELECT name, position FROM projection_checkpoints`)) as readonly { name: string; position: bigint | number }[];
    for (const row of rows) {
      if (row.name !== projectionNames.sessionCache) this.advance(row.name, Number(row.position));
    }
    if (this.options.redis) {
      const { client, keys } = this.options.redis;
      const cached = await client.get(keys.checkpoint(projectionNames.sessionCache));
      this.advance(projectionNames.sessionCache, Number(cached ?? 0));
    }
  }

  private ensurePolling(): void {
    if (this.poller || this.closed) return;
    this.poller = setInterval(() => {
      if (this.waiters.size === 0) {
        clearInterval(this.poller!);
        this.poller = null;
        return;
      }
      void this.refresh().catch(() => {});
    }, 200);
  }
}
