import pg from 'pg';
import { parseDomainEvent } from '@portcullis/contracts';
import type { EventStore } from '../event-store/event-store.ts';
import { CheckpointFencedError, type ProjectedEvent, type ProjectionTarget } from './projection.ts';

export const PROJECTION_CONTROL_CHANNEL = 'portcullis_projection_control';

export interface RunnerLogger {
  info(obj: object, message: string): void;
  warn(obj: object, message: string): void;
  error(obj: object, message: string): void;
}

export interface ProjectionRunnerOptions {
  readonly store: Pick<EventStore, 'readAll' | 'appendGeneration' | 'waitForAppend'>;
  readonly target: ProjectionTarget;
  readonly databaseUrl: string;
  readonly batchSize: number;
  readonly pollIntervalMs: number;
  readonly log: RunnerLogger;
  /** How often a standby checks whether the holder is gone. */
  readonly standbyIntervalMs?: number;
}

/** The advisory-lock key of a projection: one holder per projection across every projector process. */
export function projectionLockKey(name: string): string {
  return `portcullis.projection.${name}`;
}

/**
 * Follows the log for one projection. Holds the projection's advisory lock on a dedicated connection; when
 * the holding process dies, Postgres drops its connection and the lock, and a standby takes over from the
 * stored checkpoint.
 */
export class ProjectionRunner {
  private readonly abort = new AbortController();
  private lockClient: pg.Client | null = null;
  private releaseRequested = false;
  private loop: Promise<void> | null = null;
  private holding = false;

  constructor(private readonly options: ProjectionRunnerOptions) {}

  get name(): string {
    return this.options.target.name;
  }

  get isHolder(): boolean {
    return this.holding;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    await this.dropLock();
  }

  private async run(): Promise<void> {
    const { target, store, log } = this.options;
    let checkpoint = 0;
    while (!this.abort.signal.aborted) {
      try {
        if (!this.holding) {
          if (!(await this.tryAcquire())) {
            await sleep(this.options.standbyIntervalMs ?? 500, this.abort.signal);
            continue;
          }
          checkpoint = await target.readCheckpoint();
          log.info({ projection: this.name, checkpoint }, 'projection lock acquired');
        }
        if (this.releaseRequested) {
          this.releaseRequested = false;
          log.info({ projection: this.name }, 'projection lock released on request');
          await this.dropLock();
          continue;
        }
        const generation = store.appendGeneration();
        const recorded = await store.readAll({ after: checkpoint, limit: this.options.batchSize });
        if (recorded.length === 0) {
          await store.waitForAppend(generation, this.options.pollIntervalMs, this.abort.signal);
          continue;
        }
        const projected: ProjectedEvent[] = [];
        for (const r of recorded) {
          const event = parseDomainEvent(r.type, r.data);
          if (event) projected.push({ event, recorded: r });
        }
        const to = recorded[recorded.length - 1]!.position;
        await target.applyBatch(projected, checkpoint, to);
        checkpoint = to;
        // A short batch was the whole visible log: rather than read again to find it empty, wait for the
        // next append (at once if one came in since this read began, which the generation tells).
        if (recorded.length < this.options.batchSize) {
          await store.waitForAppend(generation, this.options.pollIntervalMs, this.abort.signal);
        }
      } catch (error) {
        if (this.abort.signal.aborted) break;
        if (error instanceof CheckpointFencedError) {
          log.warn({ projection: this.name }, 'checkpoint moved under us; re-reading it');
          checkpoint = await target.readCheckpoint().catch(() => checkpoint);
          continue;
        }
        log.error({ projection: this.name, err: error }, 'projection batch failed; retrying');
        await sleep(1000, this.abort.signal);
        // A failed batch moved nothing, so the stored checkpoint is the truth. It may be past ours: a dead
        // holder's last COMMIT can land after we took the lock and read the checkpoint, and then our batch
        // fails on its rows (a unique violation) before it reaches the fence. Retrying from our stale
        // checkpoint would fail the same way for ever.
        checkpoint = await target.readCheckpoint().catch(() => checkpoint);
      }
    }
  }

  private async tryAcquire(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    const lost = (): void => {
      if (this.lockClient === client) {
        this.lockClient = null;
        this.holding = false;
      }
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      const result = await client.query<{ acquired: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS acquired',
        [projectionLockKey(this.name)],
      );
      if (!result.rows[0]?.acquired) {
        await client.end();
        return false;
      }
      // A rebuild asks the holder to step aside; it has already queued for the lock, so it gets it next.
      client.on('notification', (message) => {
        if (message.payload === `release:${this.name}`) this.releaseRequested = true;
      });
      await client.query(`LISTEN ${PROJECTION_CONTROL_CHANNEL}`);
      this.lockClient = client;
      this.holding = true;
      return true;
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
  }

  private async dropLock(): Promise<void> {
    const client = this.lockClient;
    this.lockClient = null;
    this.holding = false;
    await client?.end().catch(() => {});
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
