import { parseDomainEvent, type StreamModel } from '@portcullis/contracts';
import type { RecordedEvent } from '@portcullis/platform';
import { REDACTED_KEYS } from './audit-sentence.ts';

/**
 * A point of the log's history: everything at or below `position`, and, when an instant was asked for,
 * decided at or before `instant` (an event's decision time, as its metadata says).
 */
export interface PointInLog {
  readonly position: number;
  readonly instant: string;
  /** Whether `instant` was asked for (rather than taken from the event at `position`). */
  readonly byInstant: boolean;
}

function isAtOrBefore(recorded: RecordedEvent, point: PointInLog): boolean {
  if (recorded.position > point.position) return false;
  return !point.byInstant || Date.parse(recorded.metadata.occurredAt) <= Date.parse(point.instant);
}

/**
 * A stream folded up to a point with the model its deciders use (the same `evolve`, the same upcasting of
 * old event versions): the state a command would have decided on then. Returns the last position folded.
 */
export function foldUpTo<State>(model: StreamModel<State>, events: readonly RecordedEvent[], point: PointInLog): { state: State; position: number } {
  let state = model.initial();
  let position = 0;
  for (const recorded of events) {
    if (!isAtOrBefore(recorded, point)) continue;
    const event = parseDomainEvent(recorded.type, recorded.data);
    if (event) state = model.evolve(state, event, recorded.metadata);
    position = recorded.position;
  }
  return { state, position };
}

/** A folded state as JSON: Maps as objects, Sets as arrays, password hashes and sealed tokens redacted. */
export function plain(value: unknown): unknown {
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), plain(v)]));
  if (value instanceof Set) return [...value].map(plain);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, REDACTED_KEYS.has(k) && v !== null ? '[redacted]' : plain(v)]));
  }
  return value;
}

export interface Change {
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** What differs between two plain states, leaf by leaf (`organizations.org-1.role`). */
export function diffStates(before: unknown, after: unknown, path = ''): Change[] {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => diffStates(before[key], after[key], path ? `${path}.${key}` : key));
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: path || '.', before: before ?? null, after: after ?? null }];
}
