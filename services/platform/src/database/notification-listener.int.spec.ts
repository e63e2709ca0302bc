import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventLogDatabase, type EventLogDatabase } from '../../../../tests/support/event-log.ts';
import { waitFor } from '../../../../tests/support/processes.ts';
import { NotificationListener } from './notification-listener.ts';
import { sql } from './pool.ts';

const CHANNEL = 'notification_listener_spec';
const SECOND_CHANNEL = 'notification_listener_spec_second';

describe('NotificationListener', () => {
  let db: EventLogDatabase;

  beforeAll(async () => {
    db = await createEventLogDatabase('notification_listener');
  });

  afterAll(async () => {
    await db?.close();
  });

  const notify = (payload: string, channel = CHANNEL) => db.pool.query(sql.unsafe`SELECT pg_notify(${channel}, ${payload})`);
  // A listening connection's last statement is the LISTEN of the channel registered last.
  const listeningBackends = async (): Promise<number[]> =>
    (await db.pool.anyFirst(sql.unsafe`
      SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE ${`LISTEN ${CHANNEL}%`}`)).map(Number);

  it('hands on notifications, reports a lost connection, and listens again on a new one', async () => {
    const heard: string[] = [];
    const losses: unknown[] = [];
    const listener = new NotificationListener(db.url);
    await listener.listen(CHANNEL, { onNotification: (payload) => heard.push(payload), onLost: (error) => losses.push(error) });
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

  it('serves several channels on one connection, each to its own handlers, a channel added while listening too', async () => {
    const heard: string[] = [];
    const lostBy: string[] = [];
    const listener = new NotificationListener(db.url);
    await listener.listen(CHANNEL, { onNotification: (payload) => heard.push(`first:${payload}`), onLost: () => lostBy.push('first') });
    await listener.start();
    try {
      await listener.listen(SECOND_CHANNEL, { onNotification: (payload) => heard.push(`second:${payload}`), onLost: () => lostBy.push('second') });
      await expect(listener.listen(CHANNEL, { onNotification: () => {} })).rejects.toThrow(/has a listener already/);
      expect(await listeningBackends()).toHaveLength(1);

      await notify('a');
      await notify('b', SECOND_CHANNEL);
      await waitFor(() => heard.length === 2, { timeoutMs: 5000, message: 'a notification on each channel' });
      expect(heard).toEqual(['first:a', 'second:b']);

      const [lost] = await listeningBackends();
      await db.pool.query(sql.unsafe`SELECT pg_terminate_backend(${lost!})`);
      await waitFor(() => lostBy.length === 2, { timeoutMs: 5000, message: 'the loss reported to both channels' });
      expect(lostBy.sort()).toEqual(['first', 'second']);
      await waitFor(async () => (await listeningBackends()).some((pid) => pid !== lost), { timeoutMs: 10_000, message: 'a new listening connection' });
      await notify('c', SECOND_CHANNEL);
      await waitFor(() => heard.includes('second:c'), { timeoutMs: 5000, message: 'the second channel heard again after the reconnect' });
    } finally {
      await listener.close();
    }
    await waitFor(async () => (await listeningBackends()).length === 0, { timeoutMs: 5000, message: 'no listener left after close' });
  });
});
