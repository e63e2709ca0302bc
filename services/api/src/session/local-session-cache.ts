import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { CachedSession } from '@portcullis/contracts';
import { createRedisClient, type Logger, type Redis } from '@portcullis/platform';

const INVALIDATION_CHANNEL = '__redis__:invalidate';


/** A read of one key in flight: an invalidation of that key while it runs makes its answer unfit to keep. */
interface Read {
  invalidated: boolean;
  readonly epoch: number;
}

export interface LocalSessionCacheOptions {
  readonly redisUrl: string;
  /** The prefix of every session key (`<REDIS_KEY_PREFIX>session:`): Redis reports changes under it. */
  readonly keyPrefix: string;
  readonly maxEntries: number;
  /** A backstop only: an entry is dropped the moment Redis reports its key changed. */
  readonly ttlMs: number;
  /** How often tracking is checked to still point at this process's subscriber. */
  readonly verifyIntervalMs?: number;
  readonly log: Logger;
}

const DEFAULT_VERIFY_INTERVAL_MS = 250;
const ROUND_TRIP_TIMEOUT_MS = 1000;

/**
 * get-session's cached answers held in the api process, so a hit costs no network round trip. Redis keeps
 * them coherent: with server-assisted client-side caching in broadcast mode over the session key prefix,
 * every write the projector makes to a session key (refresh, revoke, user or organization change, deletion)
 * is pushed to this process in the same moment it is applied, before the projector's checkpoint can move,
 * so read-your-writes holds as it does against Redis itself.
 *
 * The push channel is two connections: one subscribed to the invalidation channel (RESP2, where ioredis
 * delivers them), one that turns tracking on and redirects it there. Unless both are up and tracking is
 * known to be armed at this very subscriber connection, nothing is served from or kept in the process:
 * every read goes to Redis. The subscriber gets a name of its own at every connection, so that arming can
 * never aim at a half-open connection the server still lists under an old name; and tracking is checked
 * every `verifyIntervalMs` (a redirect whose target went away shows as `broken_redirect`, which RESP2
 * clients are not told of otherwise). A broken channel empties the cache at once.
 */
export class LocalSessionCache {
  /** Each entry lives until its backstop ttl or its session's expiry, whichever comes first. */
  private readonly entries: LRUCache<string, CachedSession>;
  private readonly reads = new Map<string, Set<Read>>();
  /** Moves whenever the push channel may have missed something; reads begun before cannot be kept. */
  private epoch = 0;
  private live = false;
  /**
   * Moves each time the channel may have been lost (and at each arming): an arming that sees it move has
   * been overtaken. Apart from `epoch`, which `clear` moves too without touching the channel.
   */
  private armings = 0;
  private closed = false;
  private invalidations = 0;
  private subscriberId: string | null = null;
  private readonly subscriber: Redis;
  private readonly tracker: Redis;
  private readonly listeners = new Map<string, (payload: string) => void>();
  private readonly roundTrips = new Map<string, () => void>();
  /** Where this process's round trips travel (see `roundTrip`). */
  private readonly roundTripChannel: string;
  private readonly verifier: NodeJS.Timeout;
  private readonly instance = randomBytes(6).toString('hex');
  private connections = 0;

  constructor(private readonly options: LocalSessionCacheOptions) {
    // Wall-clock ttls: an entry must go with its session's expiry, a time on the wall clock.
    this.entries = new LRUCache<string, CachedSession>({ max: options.maxEntries, ttlAutopurge: false, perf: Date });
    this.roundTripChannel = `${options.keyPrefix}round-trip:${this.instance}`;
    this.subscriber = createRedisClient(options.redisUrl, { name: this.nextSubscriberName(), protocol: 2 });
    this.tracker = createRedisClient(options.redisUrl, { name: 'portcullis-api-tracking' });
    this.subscriber.on('messageBuffer', (channel: Buffer, message: unknown) => {
      const name = channel.toString();
      if (name === this.roundTripChannel) {
        const nonce = String(message);
        this.roundTrips.get(nonce)?.();
        this.roundTrips.delete(nonce);
        return;
      }
      if (name !== INVALIDATION_CHANNEL) {
        this.listeners.get(name)?.(String(message));
        return;
      }
      // A null message means Redis dropped everything (FLUSHALL/FLUSHDB) or the tracking table overflowed.
      if (!Array.isArray(message)) this.forgetAll();
      else for (const key of message) this.invalidate(String(key));
    });
    // Each new connection of the subscriber introduces itself under a name no earlier connection had.
    this.subscriber.on('close', () => {
      this.subscriber.options.connectionName = this.nextSubscriberName();
    });
    for (const connection of [this.subscriber, this.tracker]) {
      connection.on('close', () => this.forgetAll());
      connection.on('ready', () => void this.arm());
      connection.on('error', () => {});
    }
    this.subscriber.subscribe(INVALIDATION_CHANNEL, this.roundTripChannel).catch((error: unknown) => {
      options.log.warn({ err: error }, 'session cache invalidations: subscribe failed');
    });
    this.verifier = setInterval(() => void this.verify(), options.verifyIntervalMs ?? DEFAULT_VERIFY_INTERVAL_MS);
    this.verifier.unref();
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

  /**
   * Resolves once every invalidation of a write Redis had applied when this was called has been received:
   * a message published now travels behind them on the subscriber connection. False if the channel is down.
   */
  async roundTrip(): Promise<boolean> {
    if (!this.live) return false;
    const epoch = this.epoch;
    const nonce = randomBytes(8).toString('hex');
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.roundTrips.delete(nonce);
        resolve(false);
      }, ROUND_TRIP_TIMEOUT_MS);
      this.roundTrips.set(nonce, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    await this.tracker.publish(this.roundTripChannel, nonce).catch(() => {});
    return (await heard) && this.live && epoch === this.epoch;
  }

  /** The answer held in the process for `key`, if it holds a fresh one (a stale one is dropped); never a read of Redis. */
  held(key: string): CachedSession | undefined {
    return this.entries.get(key);
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

  /** True once invalidations are known to flow to this process, so entries are kept. */
  get isLive(): boolean {
    return this.live;
  }

  /** The client id of the subscriber connection tracking is redirected to (for operators and tests). */
  get trackingTarget(): string | null {
    return this.live ? this.subscriberId : null;
  }

  /** Drops every entry (a generation switch made them useless), keeping the channel as it is. */
  clear(): void {
    this.entries.clear();
    this.epoch += 1;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.verifier);
    this.forgetAll();
    await Promise.all([this.subscriber, this.tracker].map((c) => c.quit().catch(() => c.disconnect())));
  }

  private nextSubscriberName(): string {
    this.connections += 1;
    return `portcullis-api-invalidations-${this.instance}-${this.connections}`;
  }

  private keep(key: string, value: CachedSession, now: number): void {
    const ttl = Math.min(this.options.ttlMs, Date.parse(value.session.expiresAt) - now);
    if (!(ttl > 0)) return;
    this.entries.set(key, value, { ttl, start: now });
  }

  private invalidate(key: string): void {
    this.invalidations += 1;
    this.entries.delete(key);
    for (const read of this.reads.get(key) ?? []) read.invalidated = true;
  }

  private forgetAll(): void {
    this.live = false;
    this.epoch += 1;
    this.armings += 1;
    this.entries.clear();
  }

  /**
   * Turns tracking on for the subscriber's current connection. Called whenever either connection becomes
   * ready; goes live only when Redis confirms the subscriber is subscribed and tracking points at it.
   */
  private async arm(): Promise<void> {
    this.forgetAll();
    if (this.closed || this.subscriber.status !== 'ready' || this.tracker.status !== 'ready') return;
    const arming = this.armings;
    const name = this.subscriber.options.connectionName;
    try {
      const clients = String(await this.tracker.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
      const line = clients.split('\n').find((l) => l.includes(` name=${name} `));
      const id = line ? /(?:^|\s)id=(\d+)/.exec(line)?.[1] : undefined;
      if (!line || !id || !/ sub=[1-9]/.test(line)) {
        // Subscribed a moment from now: the subscription's confirmation comes on its own connection.
        setTimeout(() => void this.arm(), 50).unref();
        return;
      }
      // Off first: a redirect to a subscriber connection that has since been replaced must not linger.
      await this.tracker.call('CLIENT', 'TRACKING', 'OFF');
      await this.tracker.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', id, 'BCAST', 'PREFIX', this.options.keyPrefix);
      this.subscriberId = id;
      if (arming === this.armings && !this.closed && (await this.trackingProblem(id)) === null) this.live = true;
    } catch (error) {
      this.options.log.warn({ err: error }, 'session cache invalidations: arming tracking failed; reading Redis every time');
      setTimeout(() => void this.arm(), 1000).unref();
    }
  }

  /** Checks that tracking is on, in broadcast mode, redirected to the subscriber, and not broken. */
  private async verify(): Promise<void> {
    if (!this.live || this.closed) return;
    const id = this.subscriberId;
    try {
      const problem = id === null ? 'no subscriber' : await this.trackingProblem(id);
      if (problem === null || !this.live) return;
      this.options.log.warn({ problem }, 'session cache invalidations stopped; emptying the cache and arming again');
    } catch {
      return; // The tracker connection is failing; its `close` empties the cache.
    }
    this.forgetAll();
    void this.arm();
  }

  private async trackingProblem(subscriberId: string): Promise<string | null> {
    const info = (await this.tracker.call('CLIENT', 'TRACKINGINFO')) as unknown[];
    const fields = new Map<string, unknown>();
    for (let i = 0; i + 1 < info.length; i += 2) fields.set(String(info[i]), info[i + 1]);
    const flags = ((fields.get('flags') as unknown[] | undefined) ?? []).map(String);
    if (!flags.includes('on') || !flags.includes('bcast')) return `tracking is ${flags.join(',') || 'off'}`;
    if (flags.includes('broken_redirect')) return 'the redirect target went away';
    if (String(fields.get('redirect')) !== subscriberId) return `redirected to ${String(fields.get('redirect'))}, not ${subscriberId}`;
    return null;
  }
}
