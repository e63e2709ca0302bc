import type { EventStore } from '@portcullis/platform';
import { secondsWaitingAfter } from '@portcullis/platform/projection/waiting';

/**
 * For each distinct checkpoint below the head, how long the oldest event a projection there has not applied
 * has waited (seconds; see `secondsWaitingAfter`).
 */
export async function secondsWaitingAfterEach(store: Pick<EventStore, 'readAll'>, checkpoints: Iterable<number>, head: number, now = Date.now()): Promise<Map<number, number>> {
  const behind = [...new Set(checkpoints)].filter((position) => position < head);
  const waits = await Promise.all(behind.map((position) => secondsWaitingAfter(store, position, head, now)));
  return new Map(behind.map((position, index) => [position, waits[index]!]));
}
