import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { scanKeys } from '../cache/redis.ts';
import {
  formatCacheCheckpoint,
  newGenerationName,
  parseCacheCheckpoint,
  parsePointer,
  type SessionCacheKeys,
  type SessionCacheLayout,
} from '../cache/session-cache-layout.ts';
import { checkpointNotice } from './postgres-target.ts';
import { CheckpointFencedError, type ProjectedEvent, type ProjectionTarget, type ShadowTarget } from './projection.ts';
import { replayInto, type ReplayOptions } from './rebuild.ts';
import { OverlayBatch, type Prefetched, type RedisBatch } from './redis-batch.ts';

export type { RedisBatch } from './redis-batch.ts';

export interface RedisProjection {
  readonly name: string;
  /** The event types it is built from (absent: every type). */
  readonly handles?: ReadonlySet<string>;
  /**
   * String keys `apply` will read for this event, fetched for the whole batch in one round trip before it
   * runs rather than one at a time. A guess: a key read but not named here is simply read then.
   */
  readsOf?(projected: ProjectedEvent, keys: SessionCacheKeys): readonly string[];
  /** Set keys `apply` will read the members of, fetched in the same round trip as `readsOf`'s. */
  setReadsOf?(projected: ProjectedEvent, keys: SessionCacheKeys): readonly string[];
  apply(batch: RedisBatch, projected: ProjectedEvent, keys: SessionCacheKeys): Promise<void>;
}

/** How a Redis projection tells the history its checkpoint names from another one (a restored database). */
export interface LogAnchors {
  /** The id of the event at `position` in this log, or null when the log holds none there. */
  eventIdAt(position: number): Promise<string | null>;
}

/**
 * A batch's writes and the move of its checkpoint, all or none, in one round trip. KEYS[1] is the
 * checkpoint, ARGV[1] and ARGV[2] the values it moves from and to; then each write as its command, the
 * index of its key in KEYS, its argument count and its arguments. Answers 0, writing nothing, when the
 * checkpoint is not at `from`: another holder or a rebuild has moved it (or Redis lost it), so this batch
 * is fenced off. EXPIRENOSOONER sets an expiry only where it would keep the key at least as long.
 */
const PROJECT_BATCH_LUA = `
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
local i = 3
while i <= #ARGV do
  local count = tonumber(ARGV[i + 2])
  local key = KEYS[tonumber(ARGV[i + 1])]
  if ARGV[i] == 'EXPIRENOSOONER' then
    local at = tonumber(ARGV[i + 3])
    local current = redis.call('PEXPIRETIME', key)
    if current == -1 or (current >= 0 and current < at) then redis.call('PEXPIREAT', key, at) end
  else
    redis.call(ARGV[i], key, unpack(ARGV, i + 3, i + 2 + count))
  end
  i = i + 3 + count
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;

/**
 * How a generation nobody reads yet is filled before its runner takes over: as a rebuild fills a shadow
 * (`replayInto`), reading only the projection's event types, the next batch while the last is written.
 */
export interface GenerationReplay {
  readonly store: ReplayOptions['store'];
  readonly batchSize: number;
  /** Told of each fill: a cache replayed from the start means Redis lost it, which operators want to know. */
  readonly log?: { warn(obj: object, message: string): void };
}

/**
 * Keys of abandoned generations deleted per command, and the pause after each: a sweep of a whole cache
 * (tens of thousands of keys) takes seconds, and a shared Redis never serves it for long at a stretch.
 */
const SWEEP_BATCH = 500;
const SWEEP_PAUSE_MS = 10;

/** String values a target keeps of what it wrote (see `RedisProjectionTarget.known`): tens of megabytes at most. */
const KNOWN_VALUES = 20_000;

const PROJECT_BATCH_COMMAND = 'portcullisProjectBatch';
type ProjectBatchCommand = (numberOfKeys: number, ...keysAndArgs: string[]) => Promise<number>;

/**
 * The checkpoint's notice, published only where KEYS[1] (the checkpoint) holds ARGV[1]: sent in the same
 * pipeline as the batch's script, it costs no round trip of its own, yet announces nothing a fenced batch
 * did not do. It must be a command after the script, not a PUBLISH inside it: Redis pushes the tracking
 * invalidations of a script's writes when that command ends, and an api holding sessions in process must
 * hear them before it hears that the checkpoint moved.
 */
const ANNOUNCE_MOVE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return 0
`;

const ANNOUNCE_MOVE_COMMAND = 'portcullisAnnounceMove';

/** The two commands of a live batch, queued on an ioredis pipeline (which defineCommand extends too). */
interface BatchPipeline {
  [PROJECT_BATCH_COMMAND](numberOfKeys: number, ...keysAndArgs: string[]): BatchPipeline;
  [ANNOUNCE_MOVE_COMMAND](numberOfKeys: number, ...keysAndArgs: string[]): BatchPipeline;
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** The generation a target writes, and the checkpoint value it last read or wrote there (the fence). */
interface Writing {
  readonly keys: SessionCacheKeys;
  /** `current`: readers use it. `building`: a replay from the start, switched to once it reaches the head. */
  mode: 'current' | 'building' | 'shadow';
  stored: string;
}

/**
 * A Redis projection's state and checkpoint, in generations (see `SessionCacheLayout`). The live target
 * writes the generation readers use; when that is missing (Redis lost its data, or was never filled) or
 * was built from another history (a restored database: its checkpoint names an event this log does not
 * hold there), it replays the log into a new generation, which readers get only once it reaches the head.
 * A rebuild (`createShadow`) replays into a new generation beside the served one and swaps it in.
 */
export class RedisProjectionTarget implements ProjectionTarget {
  readonly name: string;
  readonly handles: ReadonlySet<string> | undefined;
  /** A batch is one script call, its keys and arguments spread onto the stack: past a few thousand events they overflow it. */
  readonly batchLimit = 2000;
  private readonly projectBatch: ProjectBatchCommand;
  private writing: Writing | null = null;
  /**
   * String values of the written generation as this target last read or wrote them. It is the only writer
   * of its generation's keys while it holds the projection, so what it wrote is what Redis holds, unless a
   * key has expired or been evicted since, and a projection reads keys only to write them again. A batch
   * then reads ahead only what this does not hold: most batches none at all. Forgotten whenever what it
   * writes might have changed under it (a fence, a failed batch, another generation, a new checkpoint). A
   * key Redis does not hold is kept as `{ value: null }`: lru-cache keeps no null values.
   */
  private readonly known = new LRUCache<string, { readonly value: string | null }>({ max: KNOWN_VALUES });
  /** The served generation whose abandoned neighbours were (or are being) swept, and the sweep under way. */
  private sweptFor: string | null = null;
  private sweeping: Promise<void> | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly projection: RedisProjection,
    private readonly layout: SessionCacheLayout,
    private readonly anchors: LogAnchors,
    private readonly shadowOf: string | null = null,
    /** Absent: a new generation is filled by the runner's own batches. */
    private readonly replay: GenerationReplay | null = null,
  ) {
    this.name = projection.name;
    this.handles = projection.handles;
    // ioredis sends EVALSHA, and the script itself once after a NOSCRIPT (a restarted or flushed Redis).
    if (!(PROJECT_BATCH_COMMAND in redis)) redis.defineCommand(PROJECT_BATCH_COMMAND, { lua: PROJECT_BATCH_LUA });
    if (!(ANNOUNCE_MOVE_COMMAND in redis)) redis.defineCommand(ANNOUNCE_MOVE_COMMAND, { lua: ANNOUNCE_MOVE_LUA });
    const command = (redis as unknown as Record<string, ProjectBatchCommand>)[PROJECT_BATCH_COMMAND]!;
    this.projectBatch = command.bind(redis);
  }

  /** The generation written now, once the checkpoint has been read. */
  get generation(): string | null {
    return this.writing?.keys.generation ?? null;
  }

  async readCheckpoint(signal?: AbortSignal): Promise<number> {
    this.known.clear();
    if (this.writing?.mode === 'shadow') return this.readWritingCheckpoint(this.writing);
    const pointer = parsePointer(await this.redis.get(this.layout.pointerKey));
    for (const [generation, mode] of [
      [pointer.current, 'current'],
      [pointer.building, 'building'],
    ] as const) {
      if (generation === null) continue;
      const keys = this.layout.generation(generation);
      const raw = await this.redis.get(keys.checkpoint);
      if (raw !== null && (await this.belongsToThisLog(raw))) {
        this.writing = { keys, mode, stored: raw };
        return mode === 'building' ? this.fill(this.writing, signal) : parseCacheCheckpoint(raw)!.position;
      }
    }
    // Nothing usable: replay the log from its start into a generation nobody reads until it is complete.
    const keys = this.layout.generation(newGenerationName());
    await this.redis.set(keys.checkpoint, '0');
    await this.redis.set(this.layout.pointerKey, JSON.stringify({ current: null, building: keys.generation }));
    this.writing = { keys, mode: 'building', stored: '0' };
    return this.fill(this.writing, signal);
  }

  /**
   * Brings a generation being built close to the log's head the way a rebuild fills a shadow, before the
   * runner goes on from there. Until it is served the api reads Postgres, and its writes wait for Postgres
   * too, so this is all the runner does meanwhile: the runner's own batches, sized for live work and
   * reading every event whole, took 40 s under sign-in load on a log of 60,000 events; a replay, one.
   */
  private async fill(writing: Writing, signal: AbortSignal | undefined): Promise<number> {
    const from = parseCacheCheckpoint(writing.stored)?.position ?? 0;
    if (!this.replay) return from;
    const startedAt = performance.now();
    const to = await replayInto(this, from, { store: this.replay.store, batchSize: this.replay.batchSize, untilNearHead: true, ...(signal ? { signal } : {}) });
    this.replay.log?.warn(
      { projection: this.name, generation: writing.keys.generation, from, to, ms: Math.round(performance.now() - startedAt) },
      'no usable session cache generation in Redis; replayed the log into a new one',
    );
    return to;
  }

  async applyBatch(events: readonly ProjectedEvent[], from: number, to: number, toEventId: string | null = null): Promise<void> {
    try {
      await this.applyWritten(events, from, to, toEventId);
    } catch (error) {
      this.known.clear();
      throw error;
    }
  }

  private async applyWritten(events: readonly ProjectedEvent[], from: number, to: number, toEventId: string | null): Promise<void> {
    const writing = this.writing;
    if (!writing || parseCacheCheckpoint(writing.stored)?.position !== from) throw new CheckpointFencedError(this.name, from);
    const { keys } = writing;
    // Reads need no fence of their own: a holder that wrote since must have moved the checkpoint too.
    const { strings, sets } = await this.prefetch(events, keys);
    const batch = new OverlayBatch(this.redis, strings, sets);
    for (const projected of events) await this.projection.apply(batch, projected, keys);
    const next = formatCacheCheckpoint(to, toEventId);
    const scriptKeys = [keys.checkpoint];
    const keyIndex = new Map<string, number>();
    const args = [writing.stored, next];
    for (const write of batch.writes) {
      let index = keyIndex.get(write.key);
      if (index === undefined) {
        index = scriptKeys.push(write.key);
        keyIndex.set(write.key, index);
      }
      args.push(write.command, String(index), String(write.args.length), ...write.args);
    }
    // A shadow is read by nobody: its progress is announced to no one.
    const applied =
      writing.mode === 'shadow'
        ? await this.projectBatch(scriptKeys.length, ...scriptKeys, ...args)
        : await this.applyAndAnnounce(scriptKeys, args, next, to);
    if (applied !== 1) {
      this.writing = null;
      throw new CheckpointFencedError(this.name, from);
    }
    writing.stored = next;
    for (const [key, value] of strings) this.remember(key, value);
    for (const [key, value] of batch.writtenValues()) this.remember(key, value);
  }

  private remember(key: string, value: string | null): void {
    this.known.set(key, { value });
  }

  /** A served generation's batch and the notice of its checkpoint's move, in one round trip. */
  private async applyAndAnnounce(scriptKeys: readonly string[], args: readonly string[], next: string, to: number): Promise<unknown> {
    const pipeline = this.redis.pipeline() as unknown as BatchPipeline;
    const results = await pipeline[PROJECT_BATCH_COMMAND](scriptKeys.length, ...scriptKeys, ...args)
      [ANNOUNCE_MOVE_COMMAND](1, scriptKeys[0]!, next, this.layout.checkpointChannel, this.notice(to))
      .exec();
    const [batch] = results ?? [];
    if (!batch) throw new Error(`${this.name}: the batch's pipeline answered nothing`);
    if (batch[0]) throw batch[0];
    return batch[1];
  }

  /**
   * At the head: a replay into a new generation is switched to; a served generation is checked to still be
   * served (a FLUSHALL or a restarted Redis leaves no pointer), so that an idle projector notices a lost
   * cache at once rather than at the next append.
   */
  async caughtUp(): Promise<void> {
    const writing = this.writing;
    if (writing?.mode === 'building') {
      await this.switchTo(writing);
      writing.mode = 'current';
      this.sweepAbandoned(writing.keys.generation);
      return;
    }
    if (writing?.mode !== 'current') return;
    const { current } = parsePointer(await this.redis.get(this.layout.pointerKey));
    if (current !== writing.keys.generation) {
      this.writing = null;
      this.known.clear();
      throw new CheckpointFencedError(this.name, parseCacheCheckpoint(writing.stored)?.position ?? 0);
    }
    // Also when this process takes over a served generation: an earlier holder may have died mid-sweep.
    this.sweepAbandoned(writing.keys.generation);
  }

  /** Resolves once no sweep of abandoned generations is under way (specs wait on it). */
  async swept(): Promise<void> {
    await this.sweeping;
  }

  /**
   * Deletes, in the background and a batch at a time, the keys of every generation of this log that has
   * lost its checkpoint: what a Redis that lost the served generation's checkpoint and pointer (a FLUSHALL
   * racing the projector's writes, an operator deleting keys, a partial restore) kept of it. Such a
   * generation is read by nobody and written by nobody ever again (each batch's script fences on the
   * checkpoint, a generation's checkpoint is its first key, and names are never reused), yet its keys would
   * otherwise stay for their expiry, a week. Generations that still have a checkpoint are left alone: the
   * served one, a rebuild's shadow (which `switchTo` deletes when it is done).
   */
  private sweepAbandoned(served: string): void {
    if (this.sweptFor === served || this.sweeping) return;
    this.sweptFor = served;
    this.sweeping = this.sweep(served)
      .catch(() => {
        // Tried again at the next catch-up.
        this.sweptFor = null;
      })
      .finally(() => {
        this.sweeping = null;
      });
  }

  private async sweep(served: string): Promise<void> {
    const abandoned = new Map<string, boolean>();
    await scanKeys(this.redis, this.layout.everyGeneration, async (keys) => {
      const doomed = new Map<string, string[]>();
      for (const key of keys) {
        const generation = this.layout.generationOf(key);
        if (generation === null || generation === served) continue;
        let gone = abandoned.get(generation);
        if (gone === undefined) {
          gone = (await this.redis.exists(this.layout.generation(generation).checkpoint)) === 0;
          abandoned.set(generation, gone);
        }
        if (!gone) continue;
        let list = doomed.get(generation);
        if (!list) doomed.set(generation, (list = []));
        list.push(key);
      }
      // One generation's keys share a hash slot, so one UNLINK may take many of them, in a cluster too.
      for (const list of doomed.values()) {
        for (let first = 0; first < list.length; first += SWEEP_BATCH) {
          await this.redis.unlink(...list.slice(first, first + SWEEP_BATCH));
          await new Promise((resolve) => setTimeout(resolve, SWEEP_PAUSE_MS));
        }
      }
    });
  }

  /** A new generation beside the served one, filled by a rebuild and swapped in by its `promote`. */
  async createShadow(): Promise<ShadowTarget> {
    const shadow = new RedisProjectionTarget(this.redis, this.projection, this.layout, this.anchors, this.name);
    const keys = this.layout.generation(newGenerationName());
    await this.redis.set(keys.checkpoint, '0');
    shadow.writing = { keys, mode: 'shadow', stored: '0' };
    return Object.assign(shadow, {
      promote: async () => {
        await shadow.switchTo(shadow.writing!);
        shadow.writing!.mode = 'current';
      },
      discard: () => shadow.deleteGeneration(keys),
    });
  }

  /**
   * Makes `writing` the generation readers use and drops every other generation of this log. The old
   * generation's session keys go first: an api that has not yet seen the pointer move then misses them and
   * reads Postgres or the log, where an ended session is ended, instead of a generation nobody updates.
   */
  private async switchTo(writing: Writing): Promise<void> {
    this.known.clear();
    for (const generation of await this.generations()) {
      if (generation !== writing.keys.generation) await this.deleteGeneration(this.layout.generation(generation));
    }
    await this.redis.set(this.layout.pointerKey, JSON.stringify({ current: writing.keys.generation, building: null }));
    const position = parseCacheCheckpoint(writing.stored)?.position ?? 0;
    await this.redis.publish(this.layout.checkpointChannel, this.notice(position, writing.keys.generation));
  }

  /** Generations of this log that have a checkpoint key: the served one, a replay's, or a dead rebuild's. */
  private async generations(): Promise<string[]> {
    const sample = this.layout.generation('GENERATION');
    const [before, after] = sample.checkpoint.split('GENERATION') as [string, string];
    const found: string[] = [];
    await scanKeys(this.redis, `${globLiteral(before)}*${globLiteral(after)}`, async (keys) => {
      for (const key of keys) found.push(key.slice(before.length, key.length - after.length));
    });
    return found;
  }

  private async deleteGeneration(keys: SessionCacheKeys): Promise<void> {
    // Session keys first (see switchTo), the checkpoint last: a generation with a checkpoint is still there.
    // One generation's keys share a hash slot, so each batch SCAN finds goes in one UNLINK.
    for (const pattern of [keys.allSessions, keys.all]) {
      await scanKeys(this.redis, pattern, async (found) => {
        const doomed = found.filter((key) => key !== keys.checkpoint);
        if (doomed.length > 0) await this.redis.unlink(...doomed);
      });
    }
    await this.redis.unlink(keys.checkpoint);
  }

  private notice(position: number, generation = this.writing?.keys.generation ?? ''): string {
    return checkpointNotice(`${this.shadowOf ?? this.name}@${generation}`, position);
  }

  private async readWritingCheckpoint(writing: Writing): Promise<number> {
    const raw = await this.redis.get(writing.keys.checkpoint);
    if (raw === null) throw new Error(`${this.name}: generation ${writing.keys.generation} lost its checkpoint`);
    writing.stored = raw;
    return parseCacheCheckpoint(raw)!.position;
  }

  /** Whether a checkpoint names an event this log holds at that position (0: nothing applied yet). */
  private async belongsToThisLog(raw: string): Promise<boolean> {
    const checkpoint = parseCacheCheckpoint(raw);
    if (checkpoint === null) return false;
    if (checkpoint.position === 0) return true;
    return checkpoint.eventId !== null && (await this.anchors.eventIdAt(checkpoint.position)) === checkpoint.eventId;
  }

  private async prefetch(events: readonly ProjectedEvent[], keys: SessionCacheKeys): Promise<Prefetched> {
    const wanted = [...new Set(events.flatMap((projected) => this.projection.readsOf?.(projected, keys) ?? []))];
    const known = new Map<string, string | null>();
    for (const key of wanted) {
      const kept = this.known.get(key);
      if (kept) known.set(key, kept.value);
    }
    const strings = wanted.filter((key) => !known.has(key));
    const sets = [...new Set(events.flatMap((projected) => this.projection.setReadsOf?.(projected, keys) ?? []))];
    if (strings.length === 0 && sets.length === 0) return { strings: known, sets: new Map() };
    if (sets.length === 0) {
      const values = await this.redis.mget(strings);
      for (const [i, key] of strings.entries()) known.set(key, values[i] ?? null);
      return { strings: known, sets: new Map() };
    }
    const pipeline = this.redis.pipeline();
    if (strings.length > 0) pipeline.mget(strings);
    for (const key of sets) pipeline.smembers(key);
    const answers = (await pipeline.exec()) ?? [];
    for (const [error] of answers) if (error) throw error;
    const values = strings.length > 0 ? (answers.shift()![1] as Array<string | null>) : [];
    for (const [i, key] of strings.entries()) known.set(key, values[i] ?? null);
    return { strings: known, sets: new Map(sets.map((key, i) => [key, answers[i]![1] as string[]])) };
  }
}

function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\{}]/g, '\\$&');
}
