import type { EventStore } from './event-store.ts';

/** Events a scan reads at once: narrowed to their stream ids, a page is small. */
const SCAN_PAGE = 1000;

/**
 * The streams holding an event of any of `types`, each once, in the order the log first names them: read
 * through the port, filtered by type, up to the head as it was when the scan began (what a start-up upgrade
 * carries forward; appends after it are already written the new way), with nothing of each event's data.
 */
export async function streamsWithEventsOf(store: Pick<EventStore, 'readAll' | 'headPosition'>, types: readonly string[]): Promise<string[]> {
  const until = await store.headPosition();
  const streams = new Set<string>();
  for (let after = 0; after < until; ) {
    const page = await store.readAll({ after, until, limit: SCAN_PAGE, types, fields: { data: [], metadata: [] } });
    for (const event of page) streams.add(event.streamId);
    if (page.length < SCAN_PAGE) break;
    after = page.at(-1)!.position;
  }
  return [...streams];
}
