import type { Endpoint } from '@portcullis/contracts/api/endpoint';
import type { z } from 'zod';
import { fetchWithRetries, type FetchOptions } from './fetch.ts';

/**
 * Calls of declared endpoints. Paths, request and answer types come from the endpoint declarations in
 * contracts (the ones the server registers its handlers under), so a client holds no request or answer type
 * of its own and a changed contract breaks its build, not its users.
 */

type Input<S> = S extends z.ZodType ? z.input<S> : never;

/** What a call sends: the endpoint's body, query and path parameters, each only where it declares one. */
export type CallInput<E extends Endpoint> = (E['body'] extends z.ZodType ? { readonly body: Input<E['body']> } : { readonly body?: never }) &
  (E['query'] extends z.ZodType ? { readonly query?: Input<E['query']> } : { readonly query?: never }) &
  (E['params'] extends z.ZodType ? { readonly params: Input<E['params']> } : { readonly params?: never });

/** The 200 answer as the contract declares it. */
export type Answer<E extends Endpoint> = E['answer'] extends z.ZodType ? z.output<E['answer']> : unknown;

/** A call's arguments: the input may be left out where the endpoint needs nothing (no body, no path parameter). */
export type CallArguments<E extends Endpoint> = object extends CallInput<E>
  ? [input?: CallInput<E>, options?: FetchOptions]
  : [input: CallInput<E>, options?: FetchOptions];

export interface EndpointTarget {
  /** Where the api answers: `https://auth.example.com`; empty for the page's own origin (a console it serves). */
  readonly baseURL: string;
  /** The auth API's base path (AUTH_BASE_PATH), which endpoints not served at the root sit under. */
  readonly authBasePath?: string;
}

/** A query or path value as text: numbers and booleans as written, anything else as JSON. */
export function textOf(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' ? `${value}` : JSON.stringify(value);
}

/** Query values as the server's schemas read them: arrays comma-joined, absent and empty values left out. */
export function queryString(query: Readonly<Record<string, unknown>> | undefined): string {
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

function pathOf(target: EndpointTarget, endpoint: Endpoint, params: Readonly<Record<string, unknown>> | undefined): string {
  const filled = endpoint.path.replace(/:([A-Za-z]+)/g, (_match, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) throw new Error(`${endpoint.operationId}: path parameter ${name} is missing`);
    return encodeURIComponent(textOf(value));
  });
  const base = target.baseURL.replace(/\/+$/, '');
  return endpoint.root ? `${base}${filled}` : `${base}${target.authBasePath ?? '/api/auth'}${filled}`;
}

/** The URL an endpoint answers at for this input (links to exports, the raw JSON). */
export function endpointUrl<E extends Endpoint>(target: EndpointTarget, endpoint: E, input: CallInput<E>): string {
  return `${pathOf(target, endpoint, input.params as Record<string, unknown> | undefined)}${queryString(input.query as Record<string, unknown> | undefined)}`;
}

/** The method a call uses: the declared one, or for an endpoint served both ways POST with a body, GET without (section 7). */
function methodOf(endpoint: Endpoint, hasBody: boolean): 'GET' | 'POST' {
  if (typeof endpoint.method === 'string') return endpoint.method;
  return hasBody ? 'POST' : 'GET';
}

/** Reads a 2xx answer: JSON as parsed (null for an empty body), anything else (the NDJSON export) as text. */
async function answerOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return null;
  const type = response.headers.get('content-type') ?? '';
  if (/[/+]json\b/i.test(type)) return JSON.parse(text);
  if (type !== '') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Calls a declared endpoint through the fetch layer (`defaults`, then the call's own options); resolves to
 * its answer, rejects with an `ApiError`.
 */
export async function callEndpoint<E extends Endpoint>(target: EndpointTarget, endpoint: E, input: CallInput<E>, options: FetchOptions = {}): Promise<Answer<E>> {
  const hasBody = input.body !== undefined;
  const response = await fetchWithRetries(endpointUrl(target, endpoint, input), { method: methodOf(endpoint, hasBody), ...(hasBody ? { body: input.body } : {}) }, options);
  return (await answerOf(response)) as Answer<E>;
}

/** Options merged as the fetch layer reads them: the call's win, headers merged name by name. */
export function mergeFetchOptions(defaults: FetchOptions, call: FetchOptions | undefined): FetchOptions {
  if (!call) return defaults;
  return { ...defaults, ...call, headers: { ...defaults.headers, ...call.headers } };
}
