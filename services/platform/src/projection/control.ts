import { NotificationListener } from '../database/notification-listener.ts';

export const PROJECTION_CONTROL_CHANNEL = 'portcullis_projection_control';

/** The request a rebuild sends to the holder of a projection, on PROJECTION_CONTROL_CHANNEL. */
export function releaseRequest(projection: string): string {
  return `release:${projection}`;
}

/**
 * The request a reader of a read model sends when it needs what the holder of `projection` holds back
 * (`ProjectionTarget.holdsBack`) applied now, on PROJECTION_CONTROL_CHANNEL.
 */
export function hurryRequest(projection: string): string {
  return `hurry:${projection}`;
}

export interface ControlHandlers {
  /** A rebuild asks the holder to step aside. */
  readonly onRelease: () => void;
  /** A reader asks for what the holder holds back. */
  readonly onHurry: () => void;
}

/**
 * Requests to every projection runner of a process (rebuilds, hurries), heard on the process's one
 * listening connection (see NotificationListener for why one). While that connection is down, requests go
 * unheard: a rebuild repeats its request until it gets the lock, and what is held back is applied anyway
 * within its bound.
 */
export class ProjectionControl {
  private readonly handlers = new Map<string, ControlHandlers>();

  constructor(listener: NotificationListener, onLost: (error: unknown) => void = () => {}) {
    void listener.listen(PROJECTION_CONTROL_CHANNEL, {
      onNotification: (payload) => {
        for (const [projection, handlers] of this.handlers) {
          if (payload === releaseRequest(projection)) handlers.onRelease();
          else if (payload === hurryRequest(projection)) handlers.onHurry();
        }
      },
      onLost,
    });
  }

  /** Hands `projection`'s requests to `handlers`, until the returned stop. */
  watch(projection: string, handlers: ControlHandlers): () => void {
    this.handlers.set(projection, handlers);
    return () => {
      if (this.handlers.get(projection) === handlers) this.handlers.delete(projection);
    };
  }
}
