import pg from 'pg';

const RECONNECT_MS = 1000;

/**
 * A connection of its own LISTENing on one channel, reconnected a second after each loss until closed.
 * Each loss (a failed first connect included) goes to `onLost`, so the owner can make up for notifications
 * it may have missed while the connection was down; none is ever thrown.
 */
export class NotificationListener {
  private client: pg.Client | null = null;
  private reconnect: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly options: {
      readonly databaseUrl: string;
      /** An SQL identifier: it is sent as `LISTEN <channel>`. */
      readonly channel: string;
      readonly onNotification: (payload: string) => void;
      readonly onLost?: (error: unknown) => void;
    },
  ) {}

  /** Resolves once listening, or once the first attempt has failed and a retry is scheduled. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    let lost = false;
    const onLost = (error: unknown): void => {
      if (lost) return;
      lost = true;
      client.removeAllListeners();
      client.on('error', () => {});
      void client.end().catch(() => {});
      if (this.client === client) this.client = null;
      if (this.closed) return;
      this.options.onLost?.(error);
      this.reconnect = setTimeout(() => {
        this.reconnect = null;
        void this.start();
      }, RECONNECT_MS);
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error(`the ${this.options.channel} listener's connection ended`)));
    client.on('notification', (message) => this.options.onNotification(message.payload ?? ''));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
      this.client = client;
      if (this.closed) await this.close();
    } catch (error) {
      onLost(error);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnect) clearTimeout(this.reconnect);
    this.reconnect = null;
    const client = this.client;
    this.client = null;
    client?.removeAllListeners();
    client?.on('error', () => {});
    await client?.end().catch(() => {});
  }
}
