import { z } from 'zod';
import { DomainError } from '@portcullis/contracts';
import { describe, expect, it } from 'vitest';
import { parseQuery } from './validation.ts';

describe('parseQuery', () => {
  const schema = z.object({ limit: z.coerce.number().int().default(100), cursor: z.string().optional() });

  it('answers an empty query as the schema does, every time, without sharing one object between calls', () => {
    const first = parseQuery(schema, {});
    const second = parseQuery(schema, undefined);
    expect(first).toEqual({ limit: 100 });
    expect(second).toEqual({ limit: 100 });
    expect(second).not.toBe(first);
    (first as { limit: number }).limit = 5;
    expect(parseQuery(schema, {})).toEqual({ limit: 100 });
  });

  it('still refuses an empty query a schema requires something of, on every call', () => {
    const required = z.object({ id: z.string() });
    for (let i = 0; i < 2; i += 1) {
      expect(() => parseQuery(required, {})).toThrow(DomainError);
    }
    expect(parseQuery(schema, { limit: '7' })).toEqual({ limit: 7 });
  });
});
