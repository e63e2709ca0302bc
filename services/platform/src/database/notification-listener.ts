import pg from 'pg';

const RECONNECT_MS = 1000;

export interface ChannelHandlers {
  readonly onNotification: (payload: string) => void;
  /** Called on each loss (a failed first connect included), so the owner can make up for what it missed. */
  readonly onLost?: (error: unknown) => void;
}

/**
 * A connection of its own LISTENing on one or more channels, reconnected a second after each loss until
 * closed. Postgres (up to 17 at least) wakes every listening backend of a database on every NOTIFY, whatever
 * channel it listens on, so the parts of one process share one of these rather than each holding its own.
 * Each loss goes to every channel's `onLost`; none is ever thrown.
 */
export class NotificationListener {
  private readonly channels = new Map<string, ChannelHandlers>();
  private client: pg.Client | null = null;
  private reconnect: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly databaseUrl: string) {}

  /**
   * Hands this channel's notifications to `handlers`, from now on if already listening. `channel` is an SQL
   * identifier: it is sent as `LISTEN <channel>`. One owner per channel.
   */
  async listen(channel: string, handlers: ChannelHandlers): Promise<void> {
    if (this.channels.has(channel)) throw new Error(`${channel} has a listener already`);
    this.channels.set(channel, handlers);
    // Without a connection yet, start() (or the next reconnect) LISTENs on every channel registered by then.
    if (this.client) await this.client.query(`LISTEN ${channel}`).catch(() => {});
  }

  /** Resolves once listening, or once the first attempt has failed and a retry is scheduled. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    let lost = false;
    const onLost = (error: unknown): void => {
      if (lost) return;
      lost = true;
      client.removeAllListeners();
      client.on('error', () => {});
      void client.end().catch(() => {});
      if (this.client === client) this.client = null;
      if (this.closed) return;
      for (const handlers of this.channels.values()) handlers.onLost?.(error);
      this.reconnect = setTimeout(() => {
        this.reconnect = null;
        void this.start();
      }, RECONNECT_MS);
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error(`the ${[...this.channels.keys()].join(', ')} listener's connection ended`)));
    client.on('notification', (message) => this.channels.get(message.channel)?.onNotification(message.payload ?? ''));
    try {
      await client.connect();
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${channel}`);
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
