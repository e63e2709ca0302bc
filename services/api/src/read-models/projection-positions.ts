import { projectionNames, type ProjectionName } from '@portcullis/contracts';

interface Waiter {
  readonly position: number;
  /** Narrowed when one of them stops being read (`forget`). */
  projections: readonly ProjectionName[];
  readonly resolve: (caughtUp: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * How far each read model has applied the log, as heard from the projections' notices and read from their
 * checkpoints, and the writes waiting for them to get somewhere (read-your-writes).
 */
export class ProjectionPositions {
  private readonly positions = new Map<ProjectionName, number>();
  private readonly waiters = new Set<Waiter>();

  of(projection: ProjectionName): number {
    return this.positions.get(projection) ?? 0;
  }

  /** The lowest position all of `projections` have reached. */
  reached(projections: readonly ProjectionName[]): number {
    let lowest = Number.POSITIVE_INFINITY;
    for (const name of projections) lowest = Math.min(lowest, this.of(name));
    return lowest;
  }

  /** Records a projection's position (a name no read model has is ignored); true when it moved. */
  advance(name: string, position: number): boolean {
    if (!(Object.values(projectionNames) as string[]).includes(name)) return false;
    const projection = name as ProjectionName;
    if (this.of(projection) >= position) return false;
    this.positions.set(projection, position);
    for (const waiter of this.waiters) {
      if (waiter.projections.includes(projection) && waiter.position <= this.reached(waiter.projections)) {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        waiter.resolve(true);
      }
    }
    return true;
  }

  /**
   * Forgets a projection's position: its read model was lost or replaced (a new Redis generation). Writes
   * waiting for it wait for the others only: what they wrote is read from those until the new one is
   * served, and a generation replayed from the start would keep them waiting their whole timeout.
   */
  forget(projection: ProjectionName): void {
    this.positions.delete(projection);
    for (const waiter of this.waiters) {
      if (!waiter.projections.includes(projection)) continue;
      waiter.projections = waiter.projections.filter((name) => name !== projection);
      if (waiter.position <= this.reached(waiter.projections)) {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        waiter.resolve(true);
      }
    }
  }

  /** Resolves true once `projections` have reached `position`, false after `timeoutMs`. */
  waitFor(position: number, projections: readonly ProjectionName[], timeoutMs: number): Promise<boolean> {
    if (this.reached(projections) >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        position,
        projections,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** For logs: every position heard. */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.positions);
  }

  /** Answers every waiting write: nothing more will be heard. */
  close(): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters.clear();
  }
}
