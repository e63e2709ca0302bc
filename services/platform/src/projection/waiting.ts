import type { EventStore } from '../event-store/event-store.ts';

/** What of the log a wait is read from: nothing of an event but its position and instant. */
const POSITION_AND_INSTANT = { data: [], metadata: [] } as const;

/**
 * How long (seconds) the oldest event after `position`, up to `head`, has been in the log: the wait of the
 * oldest event a projection at that checkpoint has not applied. 0 at the head. One event read, narrowed to
 * its position and instant, so it costs the same on either engine.
 */
export async function secondsWaitingAfter(store: Pick<EventStore, 'readAll'>, position: number, head: number, now: number = Date.now()): Promise<number> {
  if (position >= head) return 0;
  const [oldest] = await store.readAll({ after: position, until: head, limit: 1, fields: POSITION_AND_INSTANT });
  return oldest ? Math.max(0, (now - oldest.recordedAt.getTime()) / 1000) : 0;
}
