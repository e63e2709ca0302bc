import type { RequestMetadata } from '@portcullis/platform';
import { runOrganizationCommand } from './organization-model.ts';
import type { OrganizationPorts } from './ports.ts';
import { decideTeam } from './team.decider.ts';

/** remove-team-member: a member leaves a team, removed by a member who may. */
export async function removeTeamMember(
  ports: Pick<OrganizationPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly actorUserId: string; readonly teamId: string; readonly userId: string },
): Promise<void> {
  const { organizationId, actorUserId, teamId, userId } = command;
  await runOrganizationCommand(ports, { name: 'organization.remove-team-member', request, organizationId, actorId: actorUserId }, ({ state }) => ({
    events: decideTeam({ type: 'remove-team-member', actorUserId, teamId, userId }, state),
    result: null,
  }));
}
