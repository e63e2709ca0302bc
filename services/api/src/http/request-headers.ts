import type { FastifyRequest } from 'fastify';

/** Methods a browser may send from any page without asking: they must change nothing. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A header's value trimmed, '' when absent or sent more than once (an ambiguous header proves nothing). */
export function headerText(request: FastifyRequest, name: string): string {
  const value = request.headers[name];
  return typeof value === 'string' ? value.trim() : '';
}
