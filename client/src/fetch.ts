import type { ErrorCode } from '@portcullis/contracts/errors/index';

/**
 * The generic fetch layer of the product spec (section 7): retries, linear or exponential with a cap, a
 * time-out, bearer auth; a 2xx answer is success, any other status an `ApiError` carrying its status and
 * statusText. Its options are better-fetch's (what better-auth's own client takes as `fetchOptions`), so one
 * setting reads the same on both clients.
 */

/** Whether to try again: `response` is null when no answer came (the server unreachable, or the time-out). */
export type RetryCondition = (response: Response | null) => boolean | Promise<boolean>;

export interface LinearRetry {
  readonly type: 'linear';
  /** Tries after the first. */
  readonly attempts: number;
  /** Milliseconds between tries. */
  readonly delay: number;
  readonly shouldRetry?: RetryCondition;
}

export interface ExponentialRetry {
  readonly type: 'exponential';
  /** Tries after the first. */
  readonly attempts: number;
  /** The wait before the first retry, doubled before each next one... */
  readonly baseDelay: number;
  /** ...up to this many milliseconds. */
  readonly maxDelay: number;
  readonly shouldRetry?: RetryCondition;
}

/** A number is that many retries one second apart (the spec's linear default). */
export type RetryOptions = number | LinearRetry | ExponentialRetry;

/** A value, or a function answering it when the request is made (a token that is refreshed, say). */
export type Resolvable<T> = T | (() => T | Promise<T>);

/** `Authorization: Bearer <token>`; no header while the token is empty or undefined. */
export interface BearerAuth {
  readonly type: 'Bearer';
  readonly token: Resolvable<string | undefined>;
}

export interface FetchOptions {
  readonly retry?: RetryOptions;
  /** Milliseconds one try may take before it is abandoned (each retry gets its own). */
  readonly timeout?: number;
  readonly auth?: BearerAuth;
  readonly headers?: Readonly<Record<string, string>>;
  /** The caller's cancel: an abort ends the call at once, retries included, with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Cookies: `include` for a browser app on another origin than the api, `same-origin` (the default) otherwise. */
  readonly credentials?: RequestCredentials;
  /** Another fetch (a test's, a framework's); the global one otherwise. */
  readonly fetch?: typeof globalThis.fetch;
}

export interface FetchRequest {
  readonly method: string;
  /** Sent as JSON. */
  readonly body?: unknown;
}

/** Codes of the failures that have no answer of the server to carry a catalogue code. */
export type TransportErrorCode = 'NETWORK_ERROR' | 'TIMEOUT';

/**
 * A call that did not succeed: a non-2xx answer (its status and statusText, and the catalogue's code,
 * message and details when the body is the server's error answer), or no answer at all (status 0: the
 * server unreachable, `NETWORK_ERROR`; no answer within the time-out, `TIMEOUT`).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly statusText: string,
    readonly code: ErrorCode | TransportErrorCode | (string & {}),
    message: string,
    readonly details?: string,
    /** The answer's body: the parsed JSON, or its text when it is not JSON. */
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The wait before retry number `attempt` (0 for the first retry). */
export function retryDelay(retry: RetryOptions, attempt: number): number {
  if (typeof retry === 'number') return 1000;
  if (retry.type === 'linear') return retry.delay;
  return Math.min(retry.maxDelay, retry.baseDelay * 2 ** attempt);
}

function retriesAllowed(retry: RetryOptions | undefined): number {
  if (retry === undefined) return 0;
  return Math.max(0, typeof retry === 'number' ? retry : retry.attempts);
}

async function resolve<T>(value: Resolvable<T>): Promise<T> {
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : value;
}

/** What an aborted call rejects with: the signal's reason (an AbortError unless the caller gave another). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(typeof reason === 'string' ? reason : 'This operation was aborted', 'AbortError');
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((done, fail) => {
    if (signal?.aborted) {
      fail(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      fail(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      done();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function headersFor(request: FetchRequest, options: FetchOptions): Promise<Headers> {
  const headers = new Headers({ accept: 'application/json' });
  if (request.body !== undefined) headers.set('content-type', 'application/json');
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
  if (options.auth?.type === 'Bearer') {
    const token = await resolve(options.auth.token);
    if (token) headers.set('authorization', `Bearer ${token}`);
  }
  return headers;
}

/** The refusal an answer of a non-2xx status makes, read from the catalogue's `{ code, message, details }` when it is that. */
export async function refusalOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: a proxy's page, say
  }
  if (typeof body === 'object' && body !== null) {
    const { code, message, details } = body as { code?: unknown; message?: unknown; details?: unknown };
    if (typeof code === 'string') {
      return new ApiError(response.status, response.statusText, code, typeof message === 'string' ? message : code, typeof details === 'string' ? details : undefined, body);
    }
  }
  return new ApiError(response.status, response.statusText, `HTTP_${response.status}`, text.slice(0, 200) || response.statusText || `HTTP ${response.status}`, undefined, body);
}

type Attempt = { readonly response: Response } | { readonly failure: ApiError };

/** One try: its answer whatever the status, or the failure that left it without one. */
async function attempt(url: string, init: RequestInit, timeout: number | undefined, signal: AbortSignal | undefined, fetcher: typeof globalThis.fetch): Promise<Attempt> {
  const timer = timeout === undefined ? undefined : AbortSignal.timeout(timeout);
  const signals = [signal, timer].filter((s): s is AbortSignal => s !== undefined);
  try {
    const response = await fetcher(url, { ...init, ...(signals.length > 0 ? { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) } : {}) });
    return { response };
  } catch (error) {
    if (signal?.aborted) throw abortReason(signal);
    if (timer?.aborted) return { failure: new ApiError(0, '', 'TIMEOUT', `No answer within ${timeout} ms`) };
    return { failure: new ApiError(0, '', 'NETWORK_ERROR', `The server could not be reached: ${error instanceof Error ? error.message : String(error)}`) };
  }
}

/**
 * Sends one request the way section 7 describes, and answers the 2xx response (its body unread). Retries,
 * when asked for, follow every other status and every try left without an answer, unless `shouldRetry` says
 * no; the last try's failure is what rejects.
 */
export async function fetchWithRetries(url: string, request: FetchRequest, options: FetchOptions = {}): Promise<Response> {
  const fetcher = options.fetch ?? globalThis.fetch;
  const allowed = retriesAllowed(options.retry);
  for (let tried = 0; ; tried += 1) {
    // Headers are made for each try: a token function is asked again (one refreshed meanwhile is sent).
    const init: RequestInit = {
      method: request.method,
      headers: await headersFor(request, options),
      credentials: options.credentials ?? 'same-origin',
      ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
    };
    const outcome = await attempt(url, init, options.timeout, options.signal, fetcher);
    if ('response' in outcome && outcome.response.ok) return outcome.response;
    const response = 'response' in outcome ? outcome.response : null;
    const retry = options.retry;
    const again = retry !== undefined && tried < allowed && (typeof retry === 'number' || !retry.shouldRetry || (await retry.shouldRetry(response)));
    if (!again) throw 'failure' in outcome ? outcome.failure : await refusalOf(outcome.response);
    // The answer is dropped unread; its connection is freed for the next try.
    await response?.body?.cancel().catch(() => {});
    await pause(retryDelay(retry, tried), options.signal);
  }
}
