import type { FastifyReply, FastifyRequest } from 'fastify';
import { serverCall } from '../http/server-call.ts';
import { resolveSession } from '../session/current-session.ts';
import type { SessionPorts } from '../session/ports.ts';

/**
 * The admin an operator's request comes from, once `operatorAccess` let it through: their user id when they
 * signed in, null for a server call or a caller of an api on loopback alone without a session.
 */
export async function operatorIdOf(ctx: SessionPorts, request: FastifyRequest, reply: FastifyReply): Promise<string | null> {
  if (serverCall(ctx, request) === 'accepted') return null;
  const caller = await resolveSession(ctx, request, reply, { refresh: false });
  return caller && !caller.session.impersonatedBy ? caller.user.id : null;
}
