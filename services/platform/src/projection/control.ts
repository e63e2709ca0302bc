import { NotificationListener } from '../database/notification-listener.ts';

export const PROJECTION_CONTROL_CHANNEL = 'portcullis_projection_control';

/** The request a rebuild sends to the holder of a projection, on PROJECTION_CONTROL_CHANNEL. */
export function releaseRequest(projection: string): string {
  return `release:${projection}`;
}

/**
 * One LISTEN connection for every projection runner of a process. Postgres signals every listening backend
 * of a database on every NOTIFY (each append, each checkpoint), whatever channel it listens on, so a
 * listener per runner costs each of them a wake-up per event; one per process is enough to hear a rebuild.
 * While the connection is down, requests go unheard: a rebuild repeats its request until it gets the lock.
 */
export class ProjectionControl {
  private readonly handlers = new Map<string, () => void>();
  private readonly listener: NotificationListener;

  constructor(databaseUrl: string, onLost: (error: unknown) => void = () => {}) {
    this.listener = new NotificationListener({
      databaseUrl,
      channel: PROJECTION_CONTROL_CHANNEL,
      onNotification: (payload) => {
        for (const [projection, handler] of this.handlers) if (payload === releaseRequest(projection)) handler();
      },
      onLost,
    });
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  /** Calls `onRelease` when a rebuild asks the holder of `projection` to step aside, until the returned stop. */
  watch(projection: string, onRelease: () => void): () => void {
    this.handlers.set(projection, onRelease);
    return () => {
      if (this.handlers.get(projection) === onRelease) this.handlers.delete(projection);
    };
  }

  close(): Promise<void> {
    return this.listener.close();
  }
}
