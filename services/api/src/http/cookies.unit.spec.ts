import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { cookies } from './cookies.ts';

let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function appWith(route: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>): Promise<FastifyInstance> {
  app = Fastify();
  await app.register(cookies);
  app.get('/', route);
  return app;
}

describe('cookies', () => {
  it('parses the Cookie header, decoding values, and gives an empty set without one', async () => {
    const server = await appWith(async (request) => ({ ...request.cookies }));
    const withCookies = await server.inject({ url: '/', headers: { cookie: 'a=1; b=x%3Dy; a=2' } });
    // The first of a repeated name counts, as browsers send the most specific cookie first.
    expect(withCookies.json()).toEqual({ a: '1', b: 'x=y' });
    const without = await server.inject({ url: '/' });
    expect(without.json()).toEqual({});
  });

  it('sends one Set-Cookie per cookie, the last value set for the same name, domain and path winning', async () => {
    const server = await appWith(async (_request, reply) => {
      reply.setCookie('session', 'first', { path: '/', httpOnly: true });
      reply.setCookie('other', 'kept', { path: '/', sameSite: 'lax' });
      reply.setCookie('session', 'second', { path: '/', httpOnly: true, maxAge: 0 });
      reply.setCookie('session', 'elsewhere', { path: '/api' });
      return { ok: true };
    });
    const response = await server.inject({ url: '/' });
    expect(response.headers['set-cookie']).toEqual([
      'session=second; Max-Age=0; Path=/; HttpOnly',
      'other=kept; Path=/; SameSite=Lax',
      'session=elsewhere; Path=/api',
    ]);
  });

  it('encodes a value with the encoder it is given', async () => {
    const server = await appWith(async (_request, reply) => {
      reply.setCookie('signed', 'token.sig+/=', { path: '/', encode: encodeURIComponent });
      return null;
    });
    const response = await server.inject({ url: '/' });
    expect(response.headers['set-cookie']).toBe('signed=token.sig%2B%2F%3D; Path=/');
  });
});
