import type { EventStore } from '@portcullis/platform';

/**
 * For each checkpoint below the head, the seconds since the log recorded the event right after it: how long
 * the oldest event a projection at that checkpoint has not applied has waited. Read through the port, one
 * event per distinct checkpoint, each narrowed to nothing of its data.
 */
export async function secondsWaitingAfter(store: Pick<EventStore, 'readAll'>, checkpoints: Iterable<number>, head: number, now = Date.now()): Promise<Map<number, number>> {
  const behind = [...new Set(checkpoints)].filter((position) => position < head);
  const next = await Promise.all(behind.map((after) => store.readAll({ after, limit: 1, fields: { data: [], metadata: [] } })));
  const ages = new Map<number, number>();
  for (const [index, after] of behind.entries()) {
    const [event] = next[index]!;
    if (event) ages.set(after, Math.max(0, (now - event.recordedAt.getTime()) / 1000));
  }
  return ages;
}
