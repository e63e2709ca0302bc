import type { RecordedEvent } from './event-store.ts';
import { toRecordedEvent } from './postgres-rows.ts';

/** How many noticed events a process keeps: enough for its followers moving a few batches apart. */
const NOTICED_TAIL_SIZE = 4096;

/** An append's notice: `<head>`, or `<head> <json>` with the events when they fit (see migration 120). */
interface AppendNotice {
  readonly recordedAtUs: number;
  /** Since migration 130: other appends the writer had under way (`AppendOptions.othersUnderWay`). */
  readonly underWay?: number;
  readonly events: ReadonlyArray<[string | number, string, string, number, string, unknown, unknown]>;
}

/**
 * The newest events of the log, contiguous, as append notices carried them. Notices arrive in commit order,
 * which is position order (positions are drawn under a lock held to commit), so a run of noticed events
 * with no gap is exactly what the log holds there; a notice without events (too large to carry them) or a
 * lost listener breaks the run, and reads go back to the table until a new run starts.
 */
export class NoticedTail {
  private events: RecordedEvent[] = [];
  /** The highest position this process knows was appended: by a notice, or by its own append. */
  private knownHead = 0;

  /** An append of this process's own: until its notice comes, the tail is not the whole log it knows. */
  appended(position: number): void {
    this.knownHead = Math.max(this.knownHead, position);
  }

  /** Takes a notice in; answers how many other appends its writer said it had under way. */
  heard(payload: string): number {
    const space = payload.indexOf(' ');
    const head = Number(space < 0 ? payload : payload.slice(0, space));
    if (Number.isSafeInteger(head)) this.knownHead = Math.max(this.knownHead, head);
    const notice = space < 0 ? null : parseNotice(payload.slice(space + 1));
    const noticed = notice?.events;
    if (!noticed || noticed.length === 0) {
      this.clear();
      return notice?.underWay ?? 0;
    }
    const last = this.events.at(-1);
    if (!last || last.position + 1 !== noticed[0]!.position) this.events = [];
    this.events.push(...noticed);
    if (this.events.length > NOTICED_TAIL_SIZE) this.events.splice(0, this.events.length - NOTICED_TAIL_SIZE);
    return notice.underWay;
  }

  clear(): void {
    this.events = [];
  }

  /**
   * The events after `position`, up to `limit`, when the tail holds the very next one and reaches every
   * append this process knows of (a reader is owed whatever it knows was appended); else null.
   */
  after(position: number, limit: number): RecordedEvent[] | null {
    const first = this.events[0];
    const last = this.events.at(-1);
    if (!first || !last || first.position > position + 1 || last.position <= position || last.position < this.knownHead) return null;
    const start = position + 1 - first.position;
    return this.events.slice(start, start + limit);
  }
}

function parseNotice(json: string): { events: RecordedEvent[]; underWay: number } | null {
  try {
    const notice = JSON.parse(json) as AppendNotice;
    // As pg hands a timestamptz over: a Date, its microseconds cut to milliseconds.
    const recordedAt = new Date(Math.floor(notice.recordedAtUs / 1000));
    // Notices from before migration 130 carry no count; the function never sends a negative one.
    const underWay = Number.isSafeInteger(notice.underWay) ? notice.underWay! : 0;
    const events = notice.events.map(([position, eventId, streamId, streamVersion, type, data, metadata]) =>
      toRecordedEvent({ position: String(position), event_id: eventId, stream_id: streamId, stream_version: streamVersion, type, data, metadata, recorded_at: recordedAt }),
    );
    return { events, underWay };
  } catch {
    return null;
  }
}
