import pg from 'pg';

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
  private client: pg.Client | null = null;
  private reconnect: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly onLost: (error: unknown) => void = () => {},
  ) {}

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    const lost = (error: unknown): void => {
      client.removeAllListeners();
      void client.end().catch(() => {});
      if (this.client === client) this.client = null;
      if (this.closed) return;
      this.onLost(error);
      this.reconnect ??= setTimeout(() => {
        this.reconnect = null;
        void this.start().catch(() => {});
      }, 1000);
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('projection control connection ended')));
    client.on('notification', (message) => {
      const payload = message.payload ?? '';
      for (const [projection, handler] of this.handlers) if (payload === releaseRequest(projection)) handler();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${PROJECTION_CONTROL_CHANNEL}`);
      this.client = client;
      if (this.closed) await client.end();
    } catch (error) {
      lost(error);
      throw error;
    }
  }

  /** Calls `onRelease` when a rebuild asks the holder of `projection` to step aside, until the returned stop. */
  watch(projection: string, onRelease: () => void): () => void {
    this.handlers.set(projection, onRelease);
    return () => {
      if (this.handlers.get(projection) === onRelease) this.handlers.delete(projection);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnect) clearTimeout(this.reconnect);
    const client = this.client;
    this.client = null;
    client?.removeAllListeners();
    await client?.end().catch(() => {});
  }
}
