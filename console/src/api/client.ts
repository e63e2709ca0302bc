import type { Endpoint } from '@portcullis/contracts/api/endpoint';
import type { ErrorCode } from '@portcullis/contracts/errors/index';
import type { z } from 'zod';

/**
 * The one client every console call goes through. Paths, request and answer types come from the endpoint
 * declarations in contracts (the ones the server registers its handlers under), so the console holds no
 * response type of its own and a changed contract breaks the console's build, not its users.
 */

type Input<S> = S extends z.ZodType ? z.input<S> : never;

/** What a call sends: the endpoint's body, query and path parameters, each only where it declares one. */
export type CallInput<E extends Endpoint> = (E['body'] extends z.ZodType ? { readonly body: Input<E['body']> } : { readonly body?: never }) &
  (E['query'] extends z.ZodType ? { readonly query?: Input<E['query']> } : { readonly query?: never }) &
  (E['params'] extends z.ZodType ? { readonly params: Input<E['params']> } : { readonly params?: never });

/** The 200 answer as the contract declares it. */
export type Answer<E extends Endpoint> = E['answer'] extends z.ZodType ? z.output<E['answer']> : unknown;

/** A refusal from the catalogue (or a failure to reach the server: status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode | 'NETWORK_ERROR' | (string & {}),
    message: string,
    readonly details?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The auth API's base path, which the api writes into the page it serves (AUTH_BASE_PATH). */
export function authBasePath(): string {
  const meta = typeof document === 'undefined' ? null : document.querySelector('meta[name="portcullis-auth-base"]');
  return meta?.getAttribute('content') ?? '/api/auth';
}

function pathOf(endpoint: Endpoint, params: Record<string, unknown> | undefined): string {
  const filled = endpoint.path.replace(/:([A-Za-z]+)/g, (_match, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) throw new Error(`${endpoint.operationId}: path parameter ${name} is missing`);
    return encodeURIComponent(textOf(value));
  });
  return endpoint.root ? filled : `${authBasePath()}${filled}`;
}

/** A query or path value as text: numbers and booleans as written, anything else as JSON. */
export function textOf(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' ? `${value}` : JSON.stringify(value);
}

/** Query values as the server's schemas read them: arrays comma-joined, absent and empty values left out. */
export function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) {
      if (value.length > 0) search.set(name, value.map(textOf).join(','));
    } else {
      search.set(name, textOf(value));
    }
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** The URL a GET endpoint answers at (links to exports, the raw JSON). */
export function urlOf<E extends Endpoint>(endpoint: E, input: CallInput<E>): string {
  return `${pathOf(endpoint, input.params as Record<string, unknown> | undefined)}${queryString(input.query as Record<string, unknown> | undefined)}`;
}

function methodOf(endpoint: Endpoint, hasBody: boolean): 'GET' | 'POST' {
  if (typeof endpoint.method === 'string') return endpoint.method;
  return hasBody ? 'POST' : 'GET';
}

async function refusalOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { code?: unknown; message?: unknown; details?: unknown };
    if (typeof parsed.code === 'string') {
      return new ApiError(response.status, parsed.code, typeof parsed.message === 'string' ? parsed.message : parsed.code, typeof parsed.details === 'string' ? parsed.details : undefined);
    }
  } catch {
    // not the catalogue's JSON: a proxy's page, say
  }
  return new ApiError(response.status, `HTTP_${response.status}`, text.slice(0, 200) || response.statusText);
}

/** Calls a declared endpoint with the session cookie; resolves to its answer, rejects with an ApiError. */
export async function call<E extends Endpoint>(endpoint: E, input: CallInput<E>, signal?: AbortSignal): Promise<Answer<E>> {
  const hasBody = input.body !== undefined;
  let response: Response;
  try {
    response = await fetch(urlOf(endpoint, input), {
      method: methodOf(endpoint, hasBody),
      credentials: 'same-origin',
      headers: hasBody ? { 'content-type': 'application/json', accept: 'application/json' } : { accept: 'application/json' },
      ...(hasBody ? { body: JSON.stringify(input.body) } : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'NETWORK_ERROR', 'The server could not be reached');
  }
  if (!response.ok) throw await refusalOf(response);
  const text = await response.text();
  return (text === '' ? null : JSON.parse(text)) as Answer<E>;
}
