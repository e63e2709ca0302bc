import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@portcullis/contracts/errors/index';
import { ApiError, fetchWithRetries, retryDelay } from './fetch.ts';

/**
 * The fetch layer against a real HTTP server on loopback whose answers each test scripts: it fails a given
 * number of times, holds requests unanswered, or answers the catalogue's error, and records what it got.
 */
type Handler = (request: IncomingMessage, response: ServerResponse, index: number) => void;

let server: Server;
let baseUrl: string;
let handler: Handler = (_request, response) => response.end();
let received: { method: string; url: string; authorization: string | undefined; body: string }[] = [];
/** Requests held unanswered (a time-out's), ended after each test. */
const held: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization, body });
      handler(request, response, received.length - 1);
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  for (const response of held.splice(0)) response.destroy();
  received = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((closed) => server.close(closed));
});

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Fails the first `failures` requests with a 503, then answers `{ ok: true }`. */
function failingTimes(failures: number): Handler {
  return (_request, response, index) => (index < failures ? json(response, 503, { code: 'UNAVAILABLE', message: 'try later' }) : json(response, 200, { ok: true }));
}

async function refusal(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => null,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('the fetch layer (spec section 7)', () => {
  it('answers a 2xx at once, sending JSON as POST with the bearer token', async () => {
    handler = (_request, response) => json(response, 200, { ok: true });
    const response = await fetchWithRetries(`${baseUrl}/thing`, { method: 'POST', body: { a: 1 } }, { auth: { type: 'Bearer', token: 'the-token' } });
    expect(await response.json()).toEqual({ ok: true });
    expect(received).toEqual([{ method: 'POST', url: '/thing', authorization: 'Bearer the-token', body: '{"a":1}' }]);
  });

  it('reads the bearer token afresh for each request, and sends none while it is empty', async () => {
    handler = failingTimes(1);
    const tokens = ['first', 'second'];
    await fetchWithRetries(`${baseUrl}/thing`, { method: 'GET' }, { auth: { type: 'Bearer', token: async () => tokens.shift() }, retry: { type: 'linear', attempts: 1, delay: 1 } });
    expect(received.map((r) => r.authorization)).toEqual(['Bearer first', 'Bearer second']);
    await fetchWithRetries(`${baseUrl}/thing`, { method: 'GET' }, { auth: { type: 'Bearer', token: '' } });
    expect(received[2]?.authorization).toBeUndefined();
  });

  it('retries linearly until the server answers, as many times as allowed', async () => {
    handler = failingTimes(3);
    const response = await fetchWithRetries(`${baseUrl}/flaky`, { method: 'GET' }, { retry: { type: 'linear', attempts: 3, delay: 5 } });
    expect(await response.json()).toEqual({ ok: true });
    expect(received).toHaveLength(4);
  });

  it('retries exponentially, and rejects with the last answer once the tries are spent', async () => {
    handler = failingTimes(10);
    const error = await refusal(fetchWithRetries(`${baseUrl}/down`, { method: 'GET' }, { retry: { type: 'exponential', attempts: 2, baseDelay: 2, maxDelay: 8 } }));
    expect(received).toHaveLength(3);
    expect(error).toMatchObject({ status: 503, statusText: 'Service Unavailable', code: 'UNAVAILABLE', message: 'try later' });
  });

  it('takes a number as that many retries a second apart', async () => {
    handler = failingTimes(1);
    const response = await fetchWithRetries(`${baseUrl}/once`, { method: 'GET' }, { retry: 1 });
    expect(response.status).toBe(200);
    expect(received).toHaveLength(2);
  });

  it('waits as the spec says: a second for a number, the delay for linear, base times 2 to the attempt capped for exponential', () => {
    expect([0, 1, 5].map((attempt) => retryDelay(3, attempt))).toEqual([1000, 1000, 1000]);
    expect([0, 1, 5].map((attempt) => retryDelay({ type: 'linear', attempts: 9, delay: 250 }, attempt))).toEqual([250, 250, 250]);
    const exponential = { type: 'exponential', attempts: 9, baseDelay: 100, maxDelay: 1500 } as const;
    expect([0, 1, 2, 3, 4, 5].map((attempt) => retryDelay(exponential, attempt))).toEqual([100, 200, 400, 800, 1500, 1500]);
  });

  it('stops retrying where shouldRetry says no (a refusal that will not change)', async () => {
    handler = (_request, response) => json(response, 422, { code: 'INVALID_USERNAME', message: errorCatalogue.INVALID_USERNAME.message });
    const seen: (number | null)[] = [];
    const error = await refusal(
      fetchWithRetries(`${baseUrl}/refused`, { method: 'POST', body: {} }, {
        retry: { type: 'linear', attempts: 5, delay: 1, shouldRetry: (response) => (seen.push(response?.status ?? null), response === null || response.status >= 500) },
      }),
    );
    expect(received).toHaveLength(1);
    expect(seen).toEqual([422]);
    expect(error).toMatchObject({ status: 422, statusText: 'Unprocessable Entity', code: 'INVALID_USERNAME', message: errorCatalogue.INVALID_USERNAME.message });
  });

  it('gives every non-2xx status an ApiError with status and statusText, and the body when it is not the catalogue\'s', async () => {
    handler = (_request, response) => response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>bad gateway</h1>');
    const error = await refusal(fetchWithRetries(`${baseUrl}/proxy`, { method: 'GET' }));
    expect(error).toMatchObject({ name: 'ApiError', status: 502, statusText: 'Bad Gateway', code: 'HTTP_502', message: '<h1>bad gateway</h1>', body: '<h1>bad gateway</h1>' });

    handler = (_request, response) => json(response, 400, { code: 'VALIDATION_FAILED', message: 'Invalid body parameters', details: '[body.email] Invalid email' });
    expect(await refusal(fetchWithRetries(`${baseUrl}/bad`, { method: 'POST', body: {} }))).toMatchObject({
      status: 400,
      statusText: 'Bad Request',
      code: 'VALIDATION_FAILED',
      details: '[body.email] Invalid email',
      body: { code: 'VALIDATION_FAILED', message: 'Invalid body parameters', details: '[body.email] Invalid email' },
    });
  });

  it('abandons a try that outlasts the time-out: TIMEOUT with status 0, or the next try\'s answer when retries are allowed', async () => {
    handler = (_request, response) => held.push(response);
    const error = await refusal(fetchWithRetries(`${baseUrl}/slow`, { method: 'GET' }, { timeout: 100 }));
    expect(error).toMatchObject({ status: 0, statusText: '', code: 'TIMEOUT' });

    handler = (_request, response, index) => (index === 1 ? held.push(response) : json(response, 200, { ok: true }));
    const response = await fetchWithRetries(`${baseUrl}/slow-once`, { method: 'GET' }, { timeout: 200, retry: { type: 'linear', attempts: 1, delay: 1 } });
    expect(await response.json()).toEqual({ ok: true });
    expect(received.map((r) => r.url)).toEqual(['/slow', '/slow-once', '/slow-once']);
  });

  it('answers NETWORK_ERROR with status 0 where no server listens', async () => {
    const closed = createServer();
    await new Promise<void>((listening) => closed.listen(0, '127.0.0.1', listening));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const error = await refusal(fetchWithRetries(`http://127.0.0.1:${port}/`, { method: 'GET' }, { retry: { type: 'linear', attempts: 1, delay: 1 } }));
    expect(error).toMatchObject({ status: 0, statusText: '', code: 'NETWORK_ERROR' });
  });

  it('ends at once when the caller aborts, even between tries', async () => {
    handler = failingTimes(10);
    const controller = new AbortController();
    const call = fetchWithRetries(`${baseUrl}/aborted`, { method: 'GET' }, { signal: controller.signal, retry: { type: 'linear', attempts: 5, delay: 60_000 } });
    // The first answer has come, so the call is waiting out its minute before the next try.
    await expect.poll(() => received.length).toBe(1);
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(received).toHaveLength(1);
  });
});
