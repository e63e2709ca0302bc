import type { FastifyReply, FastifyRequest } from 'fastify';
import { streams } from '@portcullis/contracts';
import { loadStream, type SnapshotStore } from '@portcullis/platform';
import type { OrganizationPorts } from './ports.ts';
import { organizationModel } from './organization.state.ts';
import type { CurrentSession } from '../session/current-session.ts';
import { setActiveSelection } from './organization-model.ts';

/**
 * The caller's session stops working in `organizationId` (deleted, left, removed from): it is no longer the
 * active organization, nor is any of its teams the active team. The projection clears it on the caller's other
 * sessions; this rewrites the session (and the cookie cache) the caller presented, so the answer already shows it.
 */
export async function clearActiveOrganizationIf(
  ctx: OrganizationPorts,
  request: FastifyRequest,
  reply: FastifyReply,
  current: CurrentSession,
  organizationId: string,
): Promise<void> {
  if (current.session.activeOrganizationId !== organizationId) return;
  await setActiveSelection(ctx, request, reply, current, { activeOrganizationId: null, activeTeamId: null });
}

/**
 * The organization and team a session works in, as the organization's own stream has them now: a member
 * removed, an organization deleted or a team removed ends the selection without naming the session (see
 * `sessionFromLog`, which asks this when no read model holds the session).
 */
export async function confirmActiveSelection(
  store: SnapshotStore,
  userId: string,
  selection: { activeOrganizationId: string; activeTeamId: string | null },
): Promise<{ activeOrganizationId: string | null; activeTeamId: string | null }> {
  const none = { activeOrganizationId: null, activeTeamId: null };
  const { state } = await loadStream(store, streams.organization(selection.activeOrganizationId), organizationModel);
  if (state.status !== 'active' || ![...state.members.values()].some((member) => member.userId === userId)) return none;
  const team = selection.activeTeamId === null ? undefined : state.teams.get(selection.activeTeamId);
  return { activeOrganizationId: state.id, activeTeamId: team?.members.has(userId) ? team.id : null };
}
