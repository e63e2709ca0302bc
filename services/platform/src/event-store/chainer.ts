import type { DatabasePool } from 'slonik';
import { sql } from '../database/pool.ts';
import { pauseUnlessAborted } from '../abortable-pause.ts';
import { DEFAULT_STANDBY_INTERVAL_MS, LeasedLock, pauseBeforeNextTry } from '../database/leased-lock.ts';
import type { EventStore } from './event-store.ts';
import { chainedHash, readChainTableHead } from './log-chain.ts';

export interface ChainerLogger {
  info(obj: object, message: string): void;
  warn(obj: object, message: string): void;
  error(obj: object, message: string): void;
}

export interface ChainerOptions {
  /** The log as stored (not `protectPersonalData`'s): the chain covers what the engine holds. */
  readonly store: Pick<EventStore, 'readAll' | 'appendGeneration' | 'waitForAppend'>;
  /** Where the chain table is. */
  readonly pool: DatabasePool;
  readonly databaseUrl: string;
  readonly batchSize: number;
  readonly pollIntervalMs: number;
  readonly log: ChainerLogger;
  /** How long the holder's lock outlives its last heartbeat (as a projection's: `ProjectionRunnerOptions.leaseMs`). */
  readonly leaseMs?: number;
  /** How often a standby tries for the lock (on average: jittered). */
  readonly standbyIntervalMs?: number;
}

/** The advisory-lock key of the chainer: one holder across every projector process. */
export const CHAINER_LOCK_KEY = 'portcullis.log-chain';

class ChainFencedError extends Error {
  constructor(expected: number) {
    super(`the chain's head moved away from ${expected} (another chainer, after this one lost its lock)`);
    this.name = 'ChainFencedError';
  }
}

/**
 * Chains a log that does not chain itself (KurrentDB) into the chain table: follows the log in position
 * order, as a projection does, and hashes each event onto the previous hash (`chainedHash`). A batch's
 * hashes and the head (the checkpoint) are written in one transaction, and the head moves only from the
 * position this holder read (a fence), so a crash at any point neither skips nor doubles an event, and a
 * holder that lost its lock commits nothing over its successor. One holder across processes: a Postgres
 * advisory lock on a connection of its own, leased as a projection's is (see `ProjectionRunner`).
 */
export class Chainer {
  private readonly abort = new AbortController();
  private readonly lock: LeasedLock;
  private loop: Promise<void> | null = null;
  private chainedTo: number | null = null;

  constructor(private readonly options: ChainerOptions) {
    this.lock = new LeasedLock({ databaseUrl: options.databaseUrl, key: CHAINER_LOCK_KEY, ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }) });
  }

  private get holding(): boolean {
    return this.lock.held;
  }

  get name(): string {
    return 'log-chain';
  }

  get isHolder(): boolean {
    return this.holding;
  }

  /** The last position chained, while this one holds; null otherwise. */
  get checkpointPosition(): number | null {
    return this.holding ? this.chainedTo : null;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    await this.lock.release();
  }

  private async run(): Promise<void> {
    const { store, pool, log, batchSize } = this.options;
    let position = 0;
    let hash: Buffer = Buffer.alloc(32);
    const reread = async (): Promise<void> => {
      const head = await readChainTableHead(pool);
      position = head.position;
      hash = Buffer.from(head.hash, 'hex');
      this.chainedTo = position;
    };
    while (!this.abort.signal.aborted) {
      try {
        if (!this.holding) {
          if (!(await this.lock.tryAcquire())) {
            await pauseBeforeNextTry(this.options.standbyIntervalMs ?? DEFAULT_STANDBY_INTERVAL_MS, this.abort.signal);
            continue;
          }
          await reread();
          log.info({ chainedTo: position }, 'log chain lock acquired');
        }
        const generation = store.appendGeneration();
        const batch = await store.readAll({ after: position, limit: batchSize });
        if (batch.length === 0) {
          await store.waitForAppend(generation, this.options.pollIntervalMs, this.abort.signal);
          continue;
        }
        const positions: number[] = [];
        const hashes: string[] = [];
        let chain: Buffer = hash;
        for (const event of batch) {
          chain = chainedHash(chain, event);
          positions.push(event.position);
          hashes.push(chain.toString('hex'));
        }
        const to = batch[batch.length - 1]!.position;
        const from = position;
        await pool.transaction(async (tx) => {
          // Committed durably even on the projector's pool (asynchronous commit there): a head exported once
          // this batch is in must not name positions a crash could take back out of the chain table.
          await tx.query(sql.unsafe`SET LOCAL synchronous_commit = on`);
          const moved = await tx.query(sql.unsafe`
            UPDATE log_chain_head SET position = ${to}, hash = decode(${chain.toString('hex')}, 'hex'), events = events + ${batch.length}
            WHERE position = ${from}`);
          if (moved.rowCount !== 1) throw new ChainFencedError(from);
          await tx.query(sql.unsafe`
            INSERT INTO log_chain (position, hash)
            SELECT position, decode(hash, 'hex') FROM unnest(${sql.array(positions, 'int8')}, ${sql.array(hashes, 'text')}) AS batch(position, hash)`);
        });
        position = to;
        hash = chain;
        this.chainedTo = to;
        if (batch.length < batchSize) await store.waitForAppend(generation, this.options.pollIntervalMs, this.abort.signal);
      } catch (error) {
        if (this.abort.signal.aborted) break;
        if (error instanceof ChainFencedError) log.warn({}, 'the log chain moved under us; re-reading its head');
        else {
          log.error({ err: error }, 'log chain batch failed; retrying');
          await pauseUnlessAborted(1000, this.abort.signal);
        }
        // Nothing of a failed batch was written: the stored head is the truth.
        await reread().catch(() => {});
      }
    }
  }
}
