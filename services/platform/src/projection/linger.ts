import type { EventStore } from '../event-store/event-store.ts';

type NoticedLog = Pick<EventStore, 'appendGeneration' | 'waitForAppend' | 'appendNotices'>;

/**
 * Group commit for a caught-up runner woken by an append: when that append's writer said it had other
 * appends coming (an api's sign-ins whose passwords are being checked), wait until that many more are
 * heard of, for no longer than `lingerMs`, and project them in one batch: one transaction, one checkpoint
 * move, one notice to every api waiting, instead of one each. As Postgres' commit_delay waits only while
 * commit_siblings are active, it waits only for appends known to be coming: a lone client's write says
 * none (its next one waits for this one's projection), and so does every write while no password is being
 * checked, so those never wait. Answers how many appends were heard while waiting.
 */
export async function gatherAppendsUnderWay(log: NoticedLog, lingerMs: number, signal: AbortSignal): Promise<number> {
  const start = log.appendNotices();
  if (lingerMs <= 0 || start.othersUnderWay <= 0) return 0;
  const until = Date.now() + lingerMs;
  let heard = 0;
  while (heard < start.othersUnderWay && !signal.aborted) {
    const left = until - Date.now();
    if (left <= 0) break;
    await log.waitForAppend(log.appendGeneration(), left, signal);
    heard = log.appendNotices().heard - start.heard;
  }
  return heard;
}
