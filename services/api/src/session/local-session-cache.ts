import { randomBytes } from 'node:crypto';
import type { CachedSession } from '@portcullis/contracts';
import { createRedisClient, type Logger, type Redis } from '@portcullis/platform';

const INVALIDATION_CHANNEL = '__redis__:invalidate';

interface Entry {
  readonly value: CachedSession;
  readonly staleAt: number;
}

/** A read of one key in flight: an invalidation of that key while it runs makes its answer unfit to keep. */
interface Read {
  invalidated: boolean;
  readonly epoch: number;
}

export interface LocalSessionCacheOptions {
  readonly redisUrl: string;
  /** The session keys' common prefix (`<REDIS_KEY_PREFIX>session:`): Redis reports changes under it. */
  readonly keyPrefix: string;
  readonly maxEntries: number;
  /** A backstop only: an entry is dropped the moment Redis reports its key changed. */
  readonly ttlMs: number;
  readonly log: Logger;
}

/**
 * get-session's cached answers held in the api process, so a hit costs no network round trip. Redis keeps
 * them coherent: with server-assisted client-side caching in broadcast mode over the session key prefix,
 * every write the projector makes to a session key (refresh, revoke, user or organization change, deletion)
 * is pushed to this process in the same moment it is applied, before the projector's checkpoint can move,
 * so read-your-writes holds as it does against Redis itself.
 *
 * The push channel is two connections: one subscribed to the invalidation channel (RESP2, where ioredis
 * delivers them), one that turns tracking on and redirects it there. Unless both are up and tracking is
 * known to be armed, nothing is served from or kept in the process: every read goes to Redis as before.
 * The projector's checkpoint notices are heard on the subscriber connection too (`listen`), so that they
 * arrive in order with the invalidations.
 */
export class LocalSessionCache {
  private readonly entries = new Map<string, Entry>();
  private readonly reads = new Map<string, Set<Read>>();
  /** Moves whenever the push channel may have missed something; reads begun before cannot be kept. */
  private epoch = 0;
  private live = false;
  private closed = false;
  private invalidations = 0;
  /** The subscriber connection's client name, unique to this process. */
  readonly subscriberName = `portcullis-api-invalidations-${randomBytes(6).toString('hex')}`;
  private readonly subscriber: Redis;
  private readonly tracker: Redis;
  private readonly listeners = new Map<string, (payload: string) => void>();

  constructor(private readonly options: LocalSessionCacheOptions) {
    this.subscriber = createRedisClient(options.redisUrl, { name: this.subscriberName, protocol: 2 });
    this.tracker = createRedisClient(options.redisUrl, { name: 'portcullis-api-tracking' });
    this.subscriber.on('messageBuffer', (channel: Buffer, message: unknown) => {
      const name = channel.toString();
      if (name !== INVALIDATION_CHANNEL) {
        this.listeners.get(name)?.(String(message));
        return;
      }
      // A null message means Redis dropped everything (FLUSHALL/FLUSHDB) or the tracking table overflowed.
      if (!Array.isArray(message)) this.forgetAll();
      else for (const key of message) this.invalidate(String(key));
    });
    for (const connection of [this.subscriber, this.tracker]) {
      connection.on('close', () => this.forgetAll());
      connection.on('ready', () => void this.arm());
      connection.on('error', () => {});
    }
    this.subscriber.subscribe(INVALIDATION_CHANNEL).catch((error: unknown) => {
      options.log.warn({ err: error }, 'session cache invalidations: subscribe failed');
    });
  }

  /**
   * Hears another pub/sub channel on the invalidation connection. Redis queues a write's invalidations
   * before it answers the write, so whatever the writer publishes after that answer (the projector's
   * checkpoint notice) arrives behind them on this one connection: a notice can never overtake the
   * invalidations of the batch it announces, which two connections would not promise.
   */
  async listen(channel: string, onMessage: (payload: string) => void): Promise<void> {
    this.listeners.set(channel, onMessage);
    await this.subscriber.subscribe(channel);
  }

  /** The answer held in the process for `key`, if it holds a fresh one (a stale one is dropped); never a read of Redis. */
  held(key: string): CachedSession | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.staleAt > Date.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** The cached answer for `key`, read through to `load` (Redis) and `decode` on a miss. */
  async lookup(
    key: string,
    load: (key: string) => Promise<string | null>,
    decode: (raw: string | null) => CachedSession | null,
  ): Promise<CachedSession | null> {
    const held = this.held(key);
    if (held) return held;
    if (!this.live) return decode(await load(key));
    // Taken before the read, so a kept entry's ttl counts from before Redis answered.
    const now = Date.now();
    const read: Read = { invalidated: false, epoch: this.epoch };
    let inFlight = this.reads.get(key);
    if (!inFlight) this.reads.set(key, (inFlight = new Set()));
    inFlight.add(read);
    try {
      const value = decode(await load(key));
      if (value && this.live && !read.invalidated && read.epoch === this.epoch) this.keep(key, value, now);
      return value;
    } finally {
      inFlight.delete(read);
      if (inFlight.size === 0) this.reads.delete(key);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** Keys Redis has reported changed so far (a gauge for operators, and for tests to wait on). */
  get invalidationsReceived(): number {
    return this.invalidations;
  }

  /** True once invalidations are known to flow, so entries are kept. */
  get isLive(): boolean {
    return this.live;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.forgetAll();
    await Promise.all([this.subscriber, this.tracker].map((c) => c.quit().catch(() => c.disconnect())));
  }

  private keep(key: string, value: CachedSession, now: number): void {
    const staleAt = Math.min(now + this.options.ttlMs, Date.parse(value.session.expiresAt));
    if (!(staleAt > now)) return;
    this.entries.delete(key);
    this.entries.set(key, { value, staleAt });
    // Map order is insertion order: the first key is the one kept longest ago.
    if (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  private invalidate(key: string): void {
    this.invalidations += 1;
    this.entries.delete(key);
    for (const read of this.reads.get(key) ?? []) read.invalidated = true;
  }

  private forgetAll(): void {
    this.live = false;
    this.epoch += 1;
    this.entries.clear();
  }

  /**
   * Turns tracking on for the subscriber's current connection. Called whenever either connection becomes
   * ready; goes live only when Redis confirms the subscriber is subscribed and tracking points at it.
   */
  private async arm(): Promise<void> {
    this.forgetAll();
    if (this.closed || this.subscriber.status !== 'ready' || this.tracker.status !== 'ready') return;
    const epoch = this.epoch;
    try {
      const clients = String(await this.tracker.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
      const line = clients.split('\n').find((l) => l.includes(` name=${this.subscriberName} `));
      const id = line ? /(?:^|\s)id=(\d+)/.exec(line)?.[1] : undefined;
      if (!line || !id || !/ sub=[1-9]/.test(line)) {
        // Subscribed a moment from now: the subscription's confirmation comes on its own connection.
        setTimeout(() => void this.arm(), 50).unref();
        return;
      }
      // Off first: a redirect to a subscriber connection that has since been replaced must not linger.
      await this.tracker.call('CLIENT', 'TRACKING', 'OFF');
      await this.tracker.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', id, 'BCAST', 'PREFIX', this.options.keyPrefix);
      if (epoch === this.epoch && !this.closed) this.live = true;
    } catch (error) {
      this.options.log.warn({ err: error }, 'session cache invalidations: arming tracking failed; reading Redis every time');
      setTimeout(() => void this.arm(), 1000).unref();
    }
  }
}
