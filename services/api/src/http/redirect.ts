import type { FastifyReply } from 'fastify';

const REFERENCE_ORIGIN = 'https://portcullis.invalid';

/**
 * better-auth's appendQueryParams: adds parameters to an absolute or root-relative URL, keeping a relative
 * one relative.
 */
export function appendQueryParams(url: string, params: Record<string, string>): string {
  const relative = url.startsWith('/');
  const parsed = relative ? new URL(url, REFERENCE_ORIGIN) : new URL(url);
  for (const [name, value] of Object.entries(params)) parsed.searchParams.append(name, value);
  return relative ? parsed.href.slice(parsed.origin.length) : parsed.href;
}

/** better-call's `ctx.redirect`: 302 with the Location and an empty body. */
export function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.status(302).header('location', location).send();
}
