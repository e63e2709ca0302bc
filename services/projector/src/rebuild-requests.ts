import { hostname } from 'node:os';
import { PROJECTION_REBUILD_CHANNEL } from '@portcullis/contracts';
import { LeasedLock } from '@portcullis/platform/database/leased-lock';
import { rebuildAside, sql, type DatabasePool, type EventStore, type NotificationListener, type ProjectionTarget } from '@portcullis/platform';

export interface RebuildRequestsOptions {
  readonly pool: DatabasePool;
  readonly databaseUrl: string;
  readonly store: Pick<EventStore, 'readAll' | 'headPosition' | 'eventIdAt'>;
  /** The read models this process may rebuild (those with a shadow, the erasure projection left out). */
  readonly targets: readonly ProjectionTarget[];
  readonly batchSize: number;
  readonly notifications: NotificationListener;
  readonly log: { info(obj: object, message: string): void; warn(obj: object, message: string): void; error(obj: object, message: string): void };
  /** How often requests are looked for besides the notices (a notice lost, a claim whose process died). */
  readonly sweepIntervalMs?: number;
  /** How long the rebuild's lock outlives this process's last heartbeat (see the runner's lease). */
  readonly leaseMs?: number;
  /** How often progress is written while a rebuild runs. */
  readonly progressIntervalMs?: number;
}

const DEFAULT_SWEEP_INTERVAL_MS = 5000;
const DEFAULT_PROGRESS_INTERVAL_MS = 500;

/** The advisory-lock key a rebuild of `projection` runs under: one running rebuild per projection. */
export function rebuildLockKey(projection: string): string {
  return `portcullis.rebuild.${projection}`;
}

/**
 * Runs the rebuilds operators ask for over HTTP (rows of `projection_rebuilds` the api writes). A rebuild is
 * claimed under its projection's rebuild lock, held on a connection of its own with a lease as the runners'
 * are: while it runs, no other process claims it; once its process dies (or freezes past the lease), the
 * lock is free and the next sweep of any projector takes the rebuild over from the start, since a shadow
 * half-built by a dead process is discarded by the next one's `createShadow`.
 */
export class RebuildRequests {
  private readonly worker = `${hostname()}:${process.pid}`;
  private readonly running = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private sweeper: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;

  constructor(private readonly options: RebuildRequestsOptions) {}

  async start(): Promise<void> {
    await this.options.notifications.listen(PROJECTION_REBUILD_CHANNEL, {
      onNotification: () => this.sweep(),
      onLost: (err) => this.options.log.warn({ err }, 'rebuild request listener lost; reconnecting'),
    });
    this.sweeper = setInterval(() => this.sweep(), this.options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS);
    this.sweep();
  }

  /** Stops running rebuilds (each goes back to requested, for the next projector) and waits for them. */
  async stop(): Promise<void> {
    this.abort.abort(new Error('the projector is stopping'));
    if (this.sweeper) clearInterval(this.sweeper);
    await this.sweeping;
    await Promise.all(this.running.values());
  }

  private sweep(): void {
    if (this.abort.signal.aborted || this.sweeping) return;
    this.sweeping = this.claimAll()
      .catch((err: unknown) => this.options.log.warn({ err }, 'looking for rebuild requests failed'))
      .finally(() => (this.sweeping = null));
  }

  private async claimAll(): Promise<void> {
    const idle = this.options.targets.filter((target) => !this.running.has(target.name));
    if (idle.length === 0) return;
    const wanted = await this.options.pool.anyFirst(sql.unsafe`
      SELECT DISTINCT projection FROM projection_rebuilds
      WHERE status IN ('requested', 'running') AND projection = ANY(${sql.array(idle.map((t) => t.name), 'text')})`);
    for (const name of wanted as readonly string[]) {
      if (this.abort.signal.aborted) return;
      const target = idle.find((t) => t.name === name)!;
      const lock = await this.tryLock(name);
      if (!lock) continue;
      const claimed = await this.claim(name).catch(async (error: unknown) => {
        await lock.release();
        throw error;
      });
      if (!claimed) {
        await lock.release();
        continue;
      }
      const run = this.run(target, claimed, lock).finally(() => this.running.delete(name));
      this.running.set(name, run);
    }
  }

  /** Takes the oldest rebuild under way for `projection`: requested, or running with its lock free (its process gone). */
  private async claim(projection: string): Promise<string | null> {
    const head = await this.options.store.headPosition();
    const id = await this.options.pool.maybeOneFirst(sql.unsafe`
      UPDATE projection_rebuilds SET status = 'running', worker = ${this.worker}, started_at = now(), progressed_at = now(),
        position = 0, head = ${head}, error = NULL
      WHERE id = (SELECT id FROM projection_rebuilds WHERE projection = ${projection} AND status IN ('requested', 'running')
                  ORDER BY requested_at LIMIT 1 FOR UPDATE)
      RETURNING id`);
    return id === null ? null : String(id);
  }

  private async run(target: ProjectionTarget, id: string, lock: LeasedLock): Promise<void> {
    const { pool, log } = this.options;
    log.info({ projection: target.name, rebuild: id }, 'rebuild claimed');
    let reached = 0;
    let written = -1;
    const writeProgress = async (): Promise<void> => {
      if (reached === written) return;
      const position = reached;
      const head = await this.options.store.headPosition();
      await pool.query(sql.unsafe`
        UPDATE projection_rebuilds SET position = ${position}, head = ${head}, progressed_at = now()
        WHERE id = ${id} AND worker = ${this.worker} AND status = 'running'`);
      written = position;
    };
    let progressing: Promise<void> = Promise.resolve();
    const progress = setInterval(() => {
      progressing = progressing.then(writeProgress).catch((err: unknown) => log.warn({ err, rebuild: id }, 'rebuild progress not written'));
    }, this.options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
    // Stopping, or the lock lost (this process frozen past its lease): the rebuild ends, its shadow discarded.
    const stopped = AbortSignal.any([this.abort.signal, lock.lost]);
    try {
      const head = await rebuildAside(target, {
        databaseUrl: this.options.databaseUrl,
        store: this.options.store,
        batchSize: this.options.batchSize,
        signal: stopped,
        onProgress: (position) => (reached = position),
      });
      clearInterval(progress);
      await progressing;
      await pool.query(sql.unsafe`
        UPDATE projection_rebuilds SET status = 'succeeded', position = ${head}, head = ${head}, finished_at = now(), progressed_at = now()
        WHERE id = ${id} AND worker = ${this.worker}`);
      log.info({ projection: target.name, rebuild: id, position: head }, 'rebuild swapped in');
    } catch (error) {
      clearInterval(progress);
      await progressing;
      if (this.abort.signal.aborted) {
        // Not the rebuild's fault: the next projector (or this one, restarted) runs it again.
        await pool.query(sql.unsafe`
          UPDATE projection_rebuilds SET status = 'requested', worker = NULL, started_at = NULL, position = 0
          WHERE id = ${id} AND worker = ${this.worker} AND status = 'running'`).catch(() => {});
        log.info({ projection: target.name, rebuild: id }, 'rebuild handed back on stop');
      } else if (lock.lost.aborted) {
        log.warn({ projection: target.name, rebuild: id }, 'rebuild lock lost; another projector takes the rebuild over');
      } else {
        const message = error instanceof Error ? error.message : String(error);
        await pool.query(sql.unsafe`
          UPDATE projection_rebuilds SET status = 'failed', error = ${message.slice(0, 2000)}, finished_at = now()
          WHERE id = ${id} AND worker = ${this.worker}`).catch(() => {});
        log.error({ projection: target.name, rebuild: id, err: error }, 'rebuild failed; the served read model is as it was');
      }
    } finally {
      await lock.release();
    }
  }

  private async tryLock(projection: string): Promise<LeasedLock | null> {
    const lock = new LeasedLock({ databaseUrl: this.options.databaseUrl, key: rebuildLockKey(projection), ...(this.options.leaseMs === undefined ? {} : { leaseMs: this.options.leaseMs }) });
    if (await lock.tryAcquire()) return lock;
    await lock.release();
    return null;
  }
}
