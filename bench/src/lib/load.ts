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
