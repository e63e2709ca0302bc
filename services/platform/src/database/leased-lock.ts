import pg from 'pg';
import { pauseUnlessAborted } from '../abortable-pause.ts';

/** Heartbeats per lease: a holder must miss several before it loses its lock to a passing hiccup. */
const HEARTBEATS_PER_LEASE = 5;

/** How long a lock outlives its holder's last heartbeat, unless its user says otherwise. */
export const DEFAULT_LEASE_MS = 5000;

/**
 * A standby's try for a lock is one statement on a connection it keeps, so trying often costs little; the
 * holder's death is then taken over within about this long.
 */
export const DEFAULT_STANDBY_INTERVAL_MS = 100;

/** A standby's pause before its next try: jittered, so that standbys started together do not try in step. */
export function pauseBeforeNextTry(intervalMs: number, signal: AbortSignal): Promise<void> {
  return pauseUnlessAborted(intervalMs * (0.5 + Math.random()), signal);
}

export interface LeasedLockOptions {
  readonly databaseUrl: string;
  /** What the lock is of: hashed into the advisory lock's key. */
  readonly key: string;
  /** How long the lock outlives its holder's last heartbeat. */
  readonly leaseMs?: number;
}

/**
 * A Postgres advisory lock for work that one process of several does at a time (a projection, a rebuild,
 * the log's chainer). It is held on a connection of its own, kept alive by a heartbeat. When the holder
 * dies, its connection and the lock go with it. When it stops answering (SIGSTOP, a paused VM), the
 * session's idle timeout, the lease, ends the connection and frees the lock for a standby.
 *
 * A standby keeps its connection between tries, so each try costs one statement, not a backend started
 * and ended. The lease is set only once the lock is held, since a standby may sit idle for longer.
 */
export class LeasedLock {
  private holder: pg.Client | null = null;
  private standby: pg.Client | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private losing = new AbortController();

  constructor(private readonly options: LeasedLockOptions) {}

  private get leaseMs(): number {
    return this.options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  get held(): boolean {
    return this.holder !== null;
  }

  /** Aborted when the lock last acquired is lost with its connection (not when it is released). */
  get lost(): AbortSignal {
    return this.losing.signal;
  }

  /** Tries for the lock once; true when this process now holds it. */
  async tryAcquire(): Promise<boolean> {
    if (this.holder) return true;
    const client = this.standby ?? (await this.connect());
    try {
      const result = await client.query<{ acquired: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS acquired', [this.options.key]);
      if (!result.rows[0]?.acquired) {
        this.standby = client;
        return false;
      }
      this.standby = null;
      await client.query(`SET idle_session_timeout = ${Math.max(1, Math.floor(this.leaseMs))}`);
    } catch (error) {
      if (this.standby === client) this.standby = null;
      await client.end().catch(() => {});
      throw error;
    }
    this.losing = new AbortController();
    this.holder = client;
    this.heartbeat = setInterval(() => {
      // A heartbeat that fails means the connection, and with it the lock, is gone.
      client.query('SELECT 1').catch(() => this.dropped(client));
    }, Math.max(1, Math.floor(this.leaseMs / HEARTBEATS_PER_LEASE)));
    return true;
  }

  /** Gives the lock up (and a standby's kept connection). */
  async release(): Promise<void> {
    const { holder, standby } = this;
    this.holder = null;
    this.standby = null;
    this.stopHeartbeat();
    await standby?.end().catch(() => {});
    await holder?.end().catch(() => {});
  }

  private async connect(): Promise<pg.Client> {
    // Keepalives let this side notice a dead network too; the lease is what lets Postgres notice us.
    const client = new pg.Client({ connectionString: this.options.databaseUrl, keepAlive: true, keepAliveInitialDelayMillis: 1000 });
    client.on('error', () => this.dropped(client));
    client.on('end', () => this.dropped(client));
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    return client;
  }

  /** `client` failed or ended: a standby tries on a new one next time; a holder's lock went with it. */
  private dropped(client: pg.Client): void {
    if (this.standby === client) this.standby = null;
    if (this.holder !== client) return;
    this.holder = null;
    this.stopHeartbeat();
    this.losing.abort(new Error(`the lock ${this.options.key} was lost with its connection`));
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}
