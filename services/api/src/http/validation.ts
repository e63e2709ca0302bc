import type { z } from 'zod';
import { DomainError } from '@portcullis/contracts';

/** better-auth's issue format, `[body.email] Invalid email address`, joined with '; '. */
function describeIssues(where: 'body' | 'query' | 'params', error: z.ZodError): string {
  return error.issues
    .map((issue) => `[${where}${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}] ${issue.message}`)
    .join('; ');
}

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new DomainError('VALIDATION_ERROR', { details: describeIssues('body', parsed.error) });
  return parsed.data;
}

export function parseParams<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) throw new DomainError('VALIDATION_ERROR', { details: describeIssues('params', parsed.error) });
  return parsed.data;
}

/** What a schema makes of an empty query, per schema: the same every time, and most GETs send none. */
const emptyQueryParses = new WeakMap<z.ZodType, object>();

function isEmptyQuery(query: unknown): boolean {
  if (query === undefined || query === null) return true;
  if (typeof query !== 'object') return false;
  for (const _key in query) return false;
  return true;
}

export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const empty = isEmptyQuery(query);
  if (empty) {
    const known = emptyQueryParses.get(schema);
    // A copy, so that no route can change what the next request gets.
    if (known) return { ...known } as z.output<S>;
  }
  const parsed = schema.safeParse(query ?? {});
  if (!parsed.success) {
    throw new DomainError('INVALID_QUERY_PARAMETERS', { details: describeIssues('query', parsed.error) });
  }
  if (empty && typeof parsed.data === 'object' && parsed.data !== null && !Array.isArray(parsed.data)) {
    emptyQueryParses.set(schema, { ...parsed.data });
  }
  return parsed.data;
}
