import type { FastifyRequest } from 'fastify';
import { DomainError } from '@portcullis/contracts';
import type { ApiContext } from '../context.ts';
import { serverCall } from './server-call.ts';

/** Hosts that only this machine can reach the api on. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * The ops endpoints (mail, audit trail) answer only operators: server calls with x-api-key, except in
 * development while the api listens on loopback alone, where whoever can reach it is on this machine.
 * Returns the check a route runs first.
 */
export function operatorAccess(ctx: ApiContext): (request: FastifyRequest) => void {
  const openToLocalCallers = ctx.config.env !== 'production' && LOOPBACK_HOSTS.has(ctx.config.host);
  return (request) => {
    const call = serverCall(ctx, request);
    if (call === 'accepted') return;
    if (call === 'absent' && openToLocalCallers) return;
    throw new DomainError('UNAUTHORIZED');
  };
}
