import type { Endpoint } from '@portcullis/contracts/api/endpoint';
import { callEndpoint, endpointUrl, type Answer, type CallInput, type EndpointTarget } from '@portcullis/client';

/**
 * The one client every console call goes through: @portcullis/client's typed calls of the endpoint
 * declarations in contracts, on the page's own origin with its session cookie. The console holds no
 * request or answer type of its own.
 */
export { ApiError, textOf, type Answer, type CallInput } from '@portcullis/client';

/** The auth API's base path, which the api writes into the page it serves (AUTH_BASE_PATH). */
export function authBasePath(): string {
  const meta = typeof document === 'undefined' ? null : document.querySelector('meta[name="portcullis-auth-base"]');
  return meta?.getAttribute('content') ?? '/api/auth';
}

function target(): EndpointTarget {
  return { baseURL: '', authBasePath: authBasePath() };
}

/** The URL a GET endpoint answers at (links to exports, the raw JSON). */
export function urlOf<E extends Endpoint>(endpoint: E, input: CallInput<E>): string {
  return endpointUrl(target(), endpoint, input);
}

/** Calls a declared endpoint with the session cookie; resolves to its answer, rejects with an ApiError. */
export function call<E extends Endpoint>(endpoint: E, input: CallInput<E>, signal?: AbortSignal): Promise<Answer<E>> {
  return callEndpoint(target(), endpoint, input, { credentials: 'same-origin', ...(signal ? { signal } : {}) });
}
