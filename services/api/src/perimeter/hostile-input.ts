import type { FastifyRequest } from 'fastify';
import { DomainError } from '@portcullis/contracts';
import type { InputCheck } from './perimeter.ts';

/** No route takes anything nested this deep; deeper input only costs the walkers that follow. */
const MAX_DEPTH = 8;
/** Keys that reach Object.prototype through a careless merge or spread (prototype pollution). */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/**
 * better-auth takes HTML form posts only where a browser form may sign in or up, and where a provider
 * answers with one (Apple's form_post callback); JSON everywhere else.
 */
const FORM_ROUTES = new Set(['/sign-in/email', '/sign-up/email', '/callback/:id']);
const FORM = 'application/x-www-form-urlencoded';

function mediaType(request: FastifyRequest): string | null {
  const type = request.headers['content-type'];
  return typeof type === 'string' ? type.split(';')[0]!.trim().toLowerCase() : null;
}

function hasBody(request: FastifyRequest): boolean {
  return request.body !== undefined && request.body !== null && request.body !== '';
}

/**
 * Why a string cannot be stored as given, or null. A lone UTF-16 surrogate is not text (Postgres refuses
 * it in jsonb, other systems replace it silently) and NUL ends strings in C and in Postgres text: either
 * would fail half-way through a write, or mean different things to different readers.
 */
function badText(value: string): string | null {
  if (LONE_SURROGATE.test(value)) return 'Invalid unicode: lone surrogate';
  if (value.includes('\u0000')) return 'Invalid unicode: NUL character';
  return null;
}

function location(where: string, path: readonly (string | number)[]): string {
  return `[${[where, ...path].join('.')}]`;
}

/**
 * Refuses, before any handler sees it, input no schema should have to defend against: forbidden keys,
 * text that is not well-formed Unicode, and absurd nesting. Walks iteratively, so a deep document cannot
 * exhaust the stack.
 */
function inspectInput(where: 'body' | 'query' | 'params', input: unknown): void {
  const code = where === 'query' ? 'INVALID_QUERY_PARAMETERS' : 'VALIDATION_ERROR';
  const pending: Array<{ value: unknown; path: (string | number)[] }> = [{ value: input, path: [] }];
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (typeof value === 'string') {
      const problem = badText(value);
      if (problem) throw new DomainError(code, { details: `${location(where, path)} ${problem}` });
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (path.length >= MAX_DEPTH) throw new DomainError(code, { details: `${location(where, path)} Nested too deeply` });
    if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push({ value: item, path: [...path, index] }));
      continue;
    }
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) throw new DomainError(code, { details: `${location(where, [...path, key])} Forbidden key` });
      const problem = badText(key);
      if (problem) throw new DomainError(code, { details: `${location(where, path)} ${problem} in a key` });
      pending.push({ value: (value as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
}

/**
 * The hostile-input perimeter, on every route (the auth API's and the ops endpoints alike): JSON bodies, and
 * form bodies only where better-auth takes them; then {@link inspectInput} on the body, the query and the
 * path parameters (`/ops/audit/users/%00` would otherwise reach Postgres, which refuses NUL in text).
 */
export function hostileInput(): InputCheck {
  return (request, route) => {
    // fastify would also hand a text/plain body to the handler as a string; better-auth answers 415.
    const type = mediaType(request);
    const allowed = type === 'application/json' || (type === FORM && route !== null && FORM_ROUTES.has(route));
    if (type !== null && !allowed && hasBody(request)) throw new DomainError('UNSUPPORTED_MEDIA_TYPE');
    inspectInput('body', request.body);
    inspectInput('query', request.query);
    inspectInput('params', request.params);
  };
}
