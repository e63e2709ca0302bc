import { randomBytes } from 'node:crypto';
import type { Redis, SessionCacheLayout } from '@portcullis/platform';
import { HeldReaders } from './held-readers.ts';

/** A pub/sub connection already open for something else, that can hear one more channel. */
export interface NoticeSource {
  listen(channel: string, onMessage: (payload: string) => void): Promise<void>;
}

/** The in-process session cache, as far as progress is concerned (see LocalSessionCache). */
export interface HeldSessions extends NoticeSource {
  readonly isLive: boolean;
  clear(): void;
  /** Resolves true once every invalidation of what Redis had applied at the call has reached the process. */
  roundTrip(): Promise<boolean>;
}

/** Notices on the checkpoint channel between api processes holding sessions. */
const HELD_WANTED = 'held-wanted';
const HELD_HEARD = 'held-heard';
/** Kept off a registration's life when deciding how long this process may trust what it holds. */
const REGISTRATION_MARGIN_MS = 100;

export interface HeldSessionConfirmationsOptions {
  readonly redis: { readonly client: Redis; readonly layout: SessionCacheLayout; readonly held?: HeldSessions | undefined };
  readonly maxLagMs: number;
  readonly pollIntervalMs: number;
  readonly now: () => number;
  readonly log: { warn(obj: object, message: string): void };
}

/**
 * Revocations against the api processes that answer sessions from memory (held, in the in-process cache,
 * kept coherent by Redis's invalidation pushes). Each such process registers in Redis how far it has heard
 * the session cache's invalidations (`HeldReaders`); a revocation waits until every registered process has
 * heard it, or until the staleness bound has passed, after which none believes what it holds any more. A
 * process serves held entries only while its registration stands, and one whose registration lapsed drops
 * what it held. The processes ask each other on the checkpoint channel (`held-wanted`, `held-heard`).
 */
export class HeldSessionConfirmations {
  private readonly readers: HeldReaders;
  /** How far this process has heard the invalidations of the current Redis generation. */
  private heldPosition = 0;
  /** Until when (monotonic ms) this process's registration stands. */
  private registered = 0;
  /** The highest position a revocation somewhere waits for this process to have heard. */
  private wanted = 0;
  private confirmed = 0;
  private confirming: Promise<void> | null = null;
  /** Revocations waiting for processes holding sessions to hear them; woken by each confirmation. */
  private readonly heardWaiters = new Set<() => void>();

  constructor(private readonly options: HeldSessionConfirmationsOptions) {
    // Registrations outlive a few missed polls but not the staleness bound twice over.
    const ttlMs = Math.max(2 * options.maxLagMs, 5 * options.pollIntervalMs);
    this.readers = new HeldReaders(options.redis.client, options.redis.layout.heldReaders, randomBytes(8).toString('hex'), ttlMs);
  }

  /** How far this process has heard, and until when it may answer from what it holds; null while it holds nothing. */
  get held(): { readonly position: number; readonly registeredUntil: number } | null {
    return this.options.redis.held?.isLive ? { position: this.heldPosition, registeredUntil: this.registered } : null;
  }

  /** The invalidations up to `position` have reached this process. */
  heard(position: number): void {
    if (position <= this.heldPosition) return;
    this.heldPosition = position;
    this.confirm();
  }

  /** Another Redis generation is served: what was heard of the old one counts for nothing. */
  restart(): void {
    this.options.redis.held?.clear();
    this.heldPosition = 0;
  }

  /** Takes the notices between processes holding sessions; false for any other notice. */
  onNotice(payload: string): boolean {
    if (payload.startsWith(`${HELD_WANTED}:`)) {
      this.wanted = Math.max(this.wanted, Number(payload.slice(HELD_WANTED.length + 1)));
      this.confirm();
      return true;
    }
    if (payload.startsWith(`${HELD_HEARD}:`)) {
      this.wakeWaiters();
      return true;
    }
    return false;
  }

  /**
   * Tells the other processes holding sessions, as soon as a revocation is appended, that it will want them
   * to confirm `position`: each then confirms the moment its invalidations arrive, while this one still waits
   * for the read models, instead of being asked only once they have applied it (a round trip more through
   * every process, in series). A hint only: `heardEverywhere` asks again whoever it still finds behind.
   */
  announce(position: number): void {
    const redis = this.options.redis;
    void redis.client.publish(redis.layout.checkpointChannel, `${HELD_WANTED}:${position}`).catch(() => {});
  }

  /**
   * Resolves true once every api process holding sessions in process has heard the session cache's
   * invalidations up to `position`, false at `bound` (when none of them believes what it holds any more).
   */
  async heardEverywhere(position: number, bound: number): Promise<boolean> {
    let asked = false;
    for (;;) {
      const heard = new Promise<void>((resolve) => this.heardWaiters.add(resolve));
      // Having heard it here already (the usual case: its notice is what woke this wait), this process
      // says so in the round trip that asks who has not, rather than being found behind and asked.
      const vouching = this.options.redis.held?.isLive === true && this.heldPosition >= position;
      const behind = await (vouching ? this.register(this.heldPosition, position) : this.readers.behind(position)).catch(() => null);
      // Redis unreachable: nobody can renew a registration, so waiting out the bound is the answer.
      if (behind !== null && behind.length === 0) return true;
      if (!asked && behind !== null) {
        asked = true;
        await this.options.redis.client.publish(this.options.redis.layout.checkpointChannel, `${HELD_WANTED}:${position}`).catch(() => {});
      }
      const left = bound - this.options.now();
      if (left <= 0) return false;
      await Promise.race([heard, new Promise<void>((resolve) => setTimeout(resolve, Math.min(left, this.options.pollIntervalMs)))]);
    }
  }

  /** Renews this process's registration among those holding sessions (while it holds any). */
  async renew(): Promise<void> {
    if (!this.options.redis.held?.isLive) {
      this.registered = 0;
      return;
    }
    try {
      await this.register(this.heldPosition);
    } catch (error) {
      this.options.log.warn({ err: error }, 'could not renew this process among those holding sessions; not answering from them');
    }
  }

  async close(): Promise<void> {
    this.wakeWaiters();
    await this.readers.leave().catch(() => {});
  }

  private wakeWaiters(): void {
    for (const wake of this.heardWaiters) wake();
    this.heardWaiters.clear();
  }

  /**
   * Tells the processes waiting on revocations how far this one has heard, as it hears more while any of them
   * wants more than was confirmed: revocations announced at once wait each for their own position only, not
   * for the last announced one.
   */
  private confirm(): void {
    if (this.confirming || this.wanted <= this.confirmed || this.heldPosition <= this.confirmed) return;
    const position = this.heldPosition;
    const redis = this.options.redis;
    this.confirming = (async () => {
      await this.register(position);
      this.confirmed = Math.max(this.confirmed, position);
      await redis.client.publish(redis.layout.checkpointChannel, `${HELD_HEARD}:${position}`);
    })()
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'could not confirm the session invalidations heard; revocations wait out the staleness bound'))
      .finally(() => {
        this.confirming = null;
        this.confirm();
      });
  }

  /**
   * Registers this process as having heard up to `position`. A registration that had lapsed drops what the
   * process held: a revocation answered meanwhile did not wait for this process, and what it held from
   * before may be what that revocation ended. Reads sent after the registration see every such revocation.
   */
  private async register(position: number): Promise<void>;
  /** The same, answering in the same round trip which registered processes have not heard `behindOf`. */
  private async register(position: number, behindOf: number): Promise<string[]>;
  private async register(position: number, behindOf?: number): Promise<string[] | void> {
    const sentAt = this.options.now();
    const standing = this.registered > sentAt;
    let behind: string[] | undefined;
    if (behindOf === undefined) await this.readers.register(position);
    else behind = await this.readers.registerAndBehind(position, behindOf);
    if (!standing) this.options.redis.held?.clear();
    this.registered = Math.max(this.registered, sentAt + this.readers.ttlMs - REGISTRATION_MARGIN_MS);
    return behind;
  }
}
