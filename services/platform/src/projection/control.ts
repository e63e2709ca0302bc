import { NotificationListener } from '../database/notification-listener.ts';

export const PROJECTION_CONTROL_CHANNEL = 'portcullis_projection_control';

/** The request a rebuild sends to the holder of a projection, on PROJECTION_CONTROL_CHANNEL. */
export function releaseRequest(projection: string): string {
  return `release:${projection}`;
}

/**
 * Rebuild requests for every projection runner of a process, heard on the process's one listening
 * connection (see NotificationListener for why one). While that connection is down, requests go unheard: a
 * rebuild repeats its request until it gets the lock.
 */
export class ProjectionControl {
  private readonly handlers = new Map<string, () => void>();

  constructor(listener: NotificationListener, onLost: (error: unknown) => void = () => {}) {
    void listener.listen(PROJECTION_CONTROL_CHANNEL, {
      onNotification: (payload) => {
        for (const [projection, handler] of this.handlers) if (payload === releaseRequest(projection)) handler();
      },
      onLost,
    });
  }

  /** Calls `onRelease` when a rebuild asks the holder of `projection` to step aside, until the returned stop. */
  watch(projection: string, onRelease: () => void): () => void {
    this.handlers.set(projection, onRelease);
    return () => {
      if (this.handlers.get(projection) === onRelease) this.handlers.delete(projection);
    };
  }
}
