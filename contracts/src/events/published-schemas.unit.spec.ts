import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventSchemasByType } from './published.ts';

const recorded = JSON.parse(readFileSync(new URL('./published-schemas.json', import.meta.url), 'utf8')) as Record<string, unknown>;

/**
 * A published event version never changes shape: readers everywhere (older projectors, the audit trail, a
 * replay of years of history) rely on it. Two versions were widened in place before this record existed
 * (`session.created.v2` gained methods, `mail.job_queued.v1` an optional `invitation`); the record holds
 * them as they stand, which covers everything ever written under their names, and they are frozen now.
 */
describe('published event schemas', () => {
  const current = eventSchemasByType();

  it('keeps every recorded version exactly as it was published (change a shape with a new .vN and an upcaster)', () => {
    for (const [type, schema] of Object.entries(recorded)) {
      expect(current[type], `${type} is recorded as published but this code no longer reads it`).toBeDefined();
      expect(current[type], `${type} changed shape after publication`).toEqual(schema);
    }
  });

  it('has a record of every version this code reads (npm run events:publish records new ones)', () => {
    expect(Object.keys(current).filter((type) => !(type in recorded))).toEqual([]);
  });
});
