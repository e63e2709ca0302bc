import { eventMetadataSchema } from '@portcullis/contracts';
import type { RecordedEvent } from './event-store.ts';

/** A row as pg hands it over: bigint as text, timestamptz as a Date, jsonb parsed. */
export interface EventRow {
  position: string;
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: unknown;
  metadata: unknown;
  recorded_at: Date;
}

export function toRecordedEvent(row: EventRow, data: unknown = row.data, metadata: unknown = row.metadata): RecordedEvent {
  return {
    position: Number(row.position),
    eventId: row.event_id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    data,
    metadata: eventMetadataSchema.parse(metadata),
    recordedAt: row.recorded_at,
  };
}
