import pg from 'pg';
import type { DatabasePool } from 'slonik';
import { sql } from '../database/pool.ts';
import { pauseUnlessAborted } from '../abortable-pause.ts';
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
const DEFAULT_LEASE_MS = 5000;
const DEFAULT_STANDBY_INTERVAL_MS = 100;
const HEARTBEATS_PER_LEASE = 5;

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
  private lockClient: pg.Client | null = null;
  private standbyClient: pg.Client | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private holding = false;
  private loop: Promise<void> | null = null;
  private chainedTo: number | null = null;

  constructor(private readonly options: ChainerOptions) {}

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
    await this.dropLock();
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
          if (!(await this.tryAcquire())) {
            const intervalMs = this.options.standbyIntervalMs ?? DEFAULT_STANDBY_INTERVAL_MS;
            await pauseUnlessAborted(intervalMs * (0.5 + Math.random()), this.abort.signal);
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

  private async tryAcquire(): Promise<boolean> {
    const leaseMs = this.options.leaseMs ?? DEFAULT_LEASE_MS;
    const client = this.standbyClient ?? (await this.connectForLock());
    try {
      const result = await client.query<{ acquired: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS acquired', [CHAINER_LOCK_KEY]);
      if (!result.rows[0]?.acquired) {
        this.standbyClient = client;
        return false;
      }
      this.standbyClient = null;
      await client.query(`SET idle_session_timeout = ${Math.max(1, Math.floor(leaseMs))}`);
      this.lockClient = client;
      this.holding = true;
      this.heartbeat = setInterval(() => {
        client.query('SELECT 1').catch(() => this.lost(client));
      }, Math.max(1, Math.floor(leaseMs / HEARTBEATS_PER_LEASE)));
      return true;
    } catch (error) {
      if (this.standbyClient === client) this.standbyClient = null;
      await client.end().catch(() => {});
      throw error;
    }
  }

  private async connectForLock(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl, keepAlive: true, keepAliveInitialDelayMillis: 1000 });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    return client;
  }

  private lost(client: pg.Client): void {
    if (this.standbyClient === client) this.standbyClient = null;
    if (this.lockClient === client) {
      this.lockClient = null;
      this.holding = false;
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = null;
    }
  }

  private async dropLock(): Promise<void> {
    const client = this.lockClient;
    const standbyClient = this.standbyClient;
    this.lockClient = null;
    this.standbyClient = null;
    this.holding = false;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await standbyClient?.end().catch(() => {});
    await client?.end().catch(() => {});
  }
}
