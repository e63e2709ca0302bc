import type { z } from 'zod';
import { DomainError } from '@portcullis/contracts';

/** better-auth's issue format, `[body.email] Invalid email address`, joined with '; '. */
function describeIssues(where: 'body' | 'query', error: z.ZodError): string {
  return error.issues
    .map((issue) => `[${where}${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}] ${issue.message}`)
    .join('; ');
}

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new DomainError('VALIDATION_ERROR', { details: describeIssues('body', parsed.error) });
  return parsed.data;
}

export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const parsed = schema.safeParse(query ?? {});
  if (!parsed.success) {
    throw new DomainError('INVALID_QUERY_PARAMETERS', { details: describeIssues('query', parsed.error) });
  }
  return parsed.data;
}
