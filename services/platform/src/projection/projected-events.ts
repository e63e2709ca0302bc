import { currentEventType, parseDomainEvent, type DomainEvent } from '@portcullis/contracts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ProjectedEvent } from './projection.ts';

/**
 * The events of a batch a projection is built from, parsed and upcast to their newest version. A type
 * this process does not know (written by a newer version of the service) is skipped and reported once
 * per type, never a crash: the projection goes on, and a newer projector will apply it. Without `parse`
 * (events read with part of their data, see `ProjectionTarget.reads`) each is handed on as stored.
 */
export function projectedEvents(
  recorded: readonly RecordedEvent[],
  handles: ReadonlySet<string> | undefined,
  onUnknownType: (type: string) => void = warnOnce,
  { parse = true }: { readonly parse?: boolean } = {},
): ProjectedEvent[] {
  const projected: ProjectedEvent[] = [];
  for (const r of recorded) {
    const type = currentEventType(r.type);
    if (type === null) {
      onUnknownType(r.type);
      continue;
    }
    if (handles && !handles.has(type)) continue;
    const event = parse ? parseDomainEvent(r.type, r.data) : ({ type, data: r.data } as DomainEvent);
    if (event) projected.push({ event, recorded: r });
  }
  return projected;
}

const reported = new Set<string>();

function warnOnce(type: string): void {
  if (reported.has(type)) return;
  reported.add(type);
  process.emitWarning(`skipping events of unknown type ${type} (written by a newer version?)`, { code: 'PORTCULLIS_UNKNOWN_EVENT' });
}
