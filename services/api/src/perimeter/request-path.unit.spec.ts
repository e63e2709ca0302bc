import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedRequest, type GuardedRequest } from './request-path.ts';

/** A bare fastify with the api's router options and a few of its route shapes, telling what each request was guarded as. */
let app: FastifyInstance;
const seen: GuardedRequest[] = [];

beforeAll(async () => {
  app = Fastify({ routerOptions: { ignoreTrailingSlash: false } });
  app.addHook('onRequest', (request, _reply, done) => {
    seen.push(guardedRequest(request, '/api/auth'));
    done();
  });
  app.get('/healthz', async () => 'ok');
  await app.register(
    async (auth) => {
      auth.post('/sign-in/email', async () => 'ok');
      auth.get('/reset-password/:token', async () => 'ok');
    },
    { prefix: '/api/auth' },
  );
  await app.ready();
});

afterAll(async () => {
  await app?.close();
});

async function guardedAs(method: 'GET' | 'POST', url: string): Promise<GuardedRequest> {
  seen.length = 0;
  await app.inject({ method, url });
  return seen[0]!;
}

describe('guardedRequest', () => {
  it('gives the matched route under the base path, whatever the spelling the router decoded', async () => {
    for (const url of ['/api/auth/sign-in/email', '/api/auth/%73ign-in/email', '/api/%61uth/sign-in/%65mail', '/api/auth/sign-in/email?x=1']) {
      expect(await guardedAs('POST', url), url).toEqual({ kind: 'route', path: '/sign-in/email' });
    }
    expect(await guardedAs('GET', '/api/auth/reset-password/abc')).toEqual({ kind: 'route', path: '/reset-password/:token' });
  });

  it('passes routes outside the base path, and calls every request no route matched unrouted', async () => {
    expect(await guardedAs('GET', '/healthz')).toBeNull();
    for (const url of ['/api/auth/sign-in/email/', '/api/auth//sign-in/email', '/api/auth/sign-in%2Femail', '/favicon.ico', '/api/authx/sign-in/email']) {
      expect(await guardedAs('POST', url), url).toEqual({ kind: 'unrouted' });
    }
    expect(await guardedAs('GET', '/api/auth/sign-in/email')).toEqual({ kind: 'unrouted' });
  });
});
