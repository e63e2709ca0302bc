import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventLogDatabase, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { NotificationListener } from './notification-listener.ts';
import { sql } from './pool.ts';

const CHANNEL = 'notification_listener_spec';

describe('NotificationListener', () => {
  let db: EventLogDatabase;

  beforeAll(async () => {
    db = await createEventLogDatabase('notification_listener');
  });

  afterAll(async () => {
    await db?.close();
  });

  const notify = (payload: string) => db.pool.query(sql.unsafe`SELECT pg_notify(${CHANNEL}, ${payload})`);
  const listeningBackends = async (): Promise<number[]> =>
    (await db.pool.anyFirst(sql.unsafe`
      SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = ${`LISTEN ${CHANNEL}`}`)).map(Number);

  it('hands on notifications, reports a lost connection, and listens again on a new one', async () => {
    const heard: string[] = [];
    const losses: unknown[] = [];
    const listener = new NotificationListener({
      databaseUrl: db.url,
      channel: CHANNEL,
      onNotification: (payload) => heard.push(payload),
      onLost: (error) => losses.push(error),
    });
    await listener.start();
    try {
      await notify('first');
      await waitFor(() => heard.includes('first'), { timeoutMs: 5000, message: 'the first notification' });

      const [lost] = await listeningBackends();
      await db.pool.query(sql.unsafe`SELECT pg_terminate_backend(${lost!})`);
      await waitFor(() => losses.length === 1, { timeoutMs: 5000, message: 'the loss to be reported' });
      await waitFor(async () => (await listeningBackends()).some((pid) => pid !== lost), {
        timeoutMs: 10_000,
        message: 'a new listening connection',
      });

      await notify('second');
      await waitFor(() => heard.includes('second'), { timeoutMs: 5000, message: 'a notification after the reconnect' });
      expect(heard).toEqual(['first', 'second']);
    } finally {
      await listener.close();
    }
    // The backend goes a moment after the client's socket closes.
    await waitFor(async () => (await listeningBackends()).length === 0, { timeoutMs: 5000, message: 'no listener left after close' });
  });
});
