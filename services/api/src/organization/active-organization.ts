import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiContext } from '../context.ts';
import type { CurrentSession } from '../session/current-session.ts';
import { setActiveSelection } from './organization-model.ts';

/**
 * The caller's session stops working in `organizationId` (deleted, left, removed from): it is no longer the
 * active organization, nor is any of its teams the active team. The projection clears it on the caller's other
 * sessions; this rewrites the session (and the cookie cache) the caller presented, so the answer already shows it.
 */
export async function clearActiveOrganizationIf(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  current: CurrentSession,
  organizationId: string,
): Promise<void> {
  if (current.session.activeOrganizationId !== organizationId) return;
  await setActiveSelection(ctx, request, reply, current, { activeOrganizationId: null, activeTeamId: null });
}
