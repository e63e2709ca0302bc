import type { FastifyRequest } from 'fastify';
import { constantTimeEqual } from '@portcullis/platform';
import type { ConfigPort } from '../ports.ts';
import { markServerCall } from './request-context.ts';

/**
 * A server call is one that presents AUTH_SERVER_API_KEY in `x-api-key`: a backend acting on its own
 * authority (set-password for a user id, the ops endpoints in production). `absent` means the request did
 * not try; `refused` that it presented a wrong key (or the deployment has no key).
 */
export function serverCall(ctx: ConfigPort, request: FastifyRequest): 'absent' | 'accepted' | 'refused' {
  const presented = request.headers['x-api-key'];
  if (presented === undefined) return 'absent';
  const key = ctx.config.serverApiKey;
  if (key === null || typeof presented !== 'string') return 'refused';
  if (!constantTimeEqual(presented, key)) return 'refused';
  markServerCall(request);
  return 'accepted';
}
