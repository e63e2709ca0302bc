import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { parseCookie, stringifySetCookie, type Cookies, type SetCookie, type StringifyOptions } from 'cookie';

/** A Set-Cookie's attributes (path, maxAge, httpOnly, sameSite, secure, …) and, optionally, how to encode its value. */
export type CookieAttributes = Omit<SetCookie, 'name' | 'value'> & StringifyOptions;

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's cookies, parsed from its Cookie header on first use. */
    readonly cookies: Cookies;
  }
  interface FastifyReply {
    /** Sets a cookie; a later call for the same name, domain and path replaces the earlier one. */
    setCookie(name: string, value: string, attributes: CookieAttributes): FastifyReply;
  }
}

const kParsedCookies = Symbol('portcullis.parsedCookies');
const kSetCookies = Symbol('portcullis.setCookies');

type WithParsedCookies = FastifyRequest & { [kParsedCookies]: Cookies | null };
type WithSetCookies = FastifyReply & { [kSetCookies]: Map<string, string> | null };

/**
 * Cookies on requests and replies, with the `cookie` package doing the parsing and serialising. Nothing runs
 * per request unless a handler reads a cookie or sets one: no hook parses every Cookie header up front, and
 * no onSend hook runs on every answer. Hooks are the costliest part of fastify's request path (each phase
 * that has one sets up a hook runner per request), and most requests, bearer ones and the probes among
 * them, never look at a cookie.
 */
export const cookies = fp(
  async function cookiesPlugin(app: FastifyInstance): Promise<void> {
    // Declared up front, so every request and reply object has the same shape.
    app.decorateRequest(kParsedCookies, null);
    app.decorateReply(kSetCookies, null);
    app.decorateRequest('cookies', {
      getter(this: FastifyRequest): Cookies {
        const request = this as WithParsedCookies;
        const header = request.headers.cookie;
        return (request[kParsedCookies] ??= header ? parseCookie(header) : {});
      },
    });
    app.decorateReply('setCookie', function setCookie(this: FastifyReply, name: string, value: string, attributes: CookieAttributes) {
      const reply = this as WithSetCookies;
      const { encode, ...rest } = attributes;
      const pending = (reply[kSetCookies] ??= new Map());
      // As browsers key them: a cookie is its name, domain and path.
      pending.set(`${name};${rest.domain ?? ''};${rest.path ?? '/'}`, stringifySetCookie({ name, value, ...rest }, { encode }));
      // Whole, not appended: fastify appends to a set-cookie header already there.
      reply.removeHeader('set-cookie');
      const lines = [...pending.values()];
      return reply.header('set-cookie', lines.length === 1 ? lines[0] : lines);
    });
  },
  { name: 'portcullis-cookies', fastify: '5.x' },
);
