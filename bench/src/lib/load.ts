import autocannon from 'autocannon';

export interface LoadFigures {
  /** Successful (2xx) answers per second: failures must not count as throughput. */
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly ok: number;
  /** Non-2xx answers, errors and timeouts together. */
  readonly failed: number;
  readonly statusCodes: Record<string, number>;
}

export interface LoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationS: number;
  readonly headers?: Record<string, string>;
  readonly requests?: autocannon.Request[];
}

export async function runLoad(options: LoadOptions): Promise<LoadFigures> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationS,
    headers: options.headers ?? {},
    ...(options.requests ? { requests: options.requests } : {}),
  });
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
  return {
    requestsPerSecond: result['2xx'] / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    ok: result['2xx'],
    failed: result.non2xx + result.errors + result.timeouts,
    statusCodes,
  };
}

/**
 * Sign-ins of `users` in turn against `baseUrl`, each connection taking the next: rotating users spreads the
 * appends over many session streams, as real traffic would.
 */
export function signInLoad(
  baseUrl: string,
  users: readonly { readonly email: string; readonly password: string }[],
  options: { readonly connections: number; readonly durationS: number },
): LoadOptions {
  const bodies = users.map((u) => JSON.stringify({ email: u.email, password: u.password }));
  let next = 0;
  return {
    url: baseUrl,
    ...options,
    requests: [
      {
        method: 'POST',
        path: '/api/auth/sign-in/email',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length]! }),
      },
    ],
  };
}
