/** Where get-session may find a session, fastest first: held in this process, the Redis cache, the session table. */
export type SessionReadModel = 'held' | 'redis' | 'sessions';

/** The log's head as read at a moment (monotonic ms, taken when the read began). */
interface HeadSample {
  readonly at: number;
  readonly head: number;
}

/** What each read model has applied, for deciding until when it may be believed. */
export interface AppliedPositions {
  readonly sessions: number;
  /** Null while no verified Redis generation is served. */
  readonly redis: number | null;
  /** What this process holds, and until when its registration among those holding sessions stands; null when it holds none. */
  readonly held: { readonly position: number; readonly registeredUntil: number } | null;
}

/**
 * Whether a read model may be believed when it says a session is live: only while it has applied everything
 * the log held `maxLagMs` ago. The log's head is sampled every poll; a read model whose position is at or
 * past a head read within the last `maxLagMs` is believed until that sample is `maxLagMs` old. A stuck,
 * lagging, flushed or rebuilding read model thus stops being believed within `maxLagMs`, and a process that
 * cannot read the head believes nothing after `maxLagMs` either.
 */
export class ReadModelTrust {
  private readonly samples: HeadSample[] = [];
  private readonly trustedUntil: Record<SessionReadModel, number> = { held: 0, redis: 0, sessions: 0 };

  constructor(
    private readonly maxLagMs: number,
    private readonly pollIntervalMs: number,
    private readonly now: () => number,
  ) {}

  trusted(model: SessionReadModel): boolean {
    return this.now() < this.trustedUntil[model];
  }

  /** The log's head as last read. */
  get logHead(): number {
    return this.samples.at(-1)?.head ?? 0;
  }

  /** A head read begun at `at`: everything acknowledged before then is at or below it. */
  sampleHead(at: number, head: number): void {
    this.samples.push({ at, head });
    // Older samples can no longer make anything believed.
    const horizon = this.now() - this.maxLagMs - this.pollIntervalMs;
    while (this.samples.length > 2 && this.samples[0]!.at < horizon) this.samples.shift();
  }

  /** For each read model: until when (monotonic ms) its position covers a head read within `maxLagMs`. */
  update(applied: AppliedPositions): void {
    const coveredUntil = (position: number): number => {
      let until = 0;
      for (const sample of this.samples) {
        if (sample.head > position) break;
        until = sample.at + this.maxLagMs;
      }
      return until;
    };
    this.trustedUntil.sessions = coveredUntil(applied.sessions);
    this.trustedUntil.redis = applied.redis === null ? 0 : coveredUntil(applied.redis);
    // Only while registered: a revocation waits for the processes registered, and for no other.
    this.trustedUntil.held = applied.redis !== null && applied.held ? Math.min(coveredUntil(applied.held.position), applied.held.registeredUntil) : 0;
  }
}
