import { z } from 'zod';
import { eventDefinitions, supersededEvents } from './index.ts';

/**
 * The JSON Schema of every event version this code can read: the current ones and every version a newer
 * one superseded. `published-schemas.json` keeps them as they were first published; a test holds every
 * version to that record, so a published version can never change shape (a change is a new `.vN` with an
 * upcaster), and `npm run events:publish` adds the versions that are new.
 */
export function eventSchemasByType(): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const { type, schema } of [...eventDefinitions, ...supersededEvents]) schemas[type] = z.toJSONSchema(schema, { io: 'input' });
  return Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : 1)));
}
