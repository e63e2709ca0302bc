import type { RequestMetadata } from '@portcullis/platform';
import { runOrganizationCommand } from './organization-model.ts';
import type { OrganizationPorts } from './ports.ts';
import { decideTeam } from './team.decider.ts';

/** remove-team: a team removed by a member who may, never the last unless `AUTH_ORGANIZATION_ALLOW_REMOVING_ALL_TEAMS`. */
export async function removeTeam(
  ports: Pick<OrganizationPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly actorUserId: string; readonly actorActiveTeamId: string | null; readonly teamId: string },
): Promise<void> {
  const { organizationId, actorUserId, actorActiveTeamId, teamId } = command;
  const allowRemovingAllTeams = ports.config.organization.teams.allowRemovingAllTeams;
  await runOrganizationCommand(ports, { name: 'organization.remove-team', request, organizationId, actorId: actorUserId }, ({ state }) => ({
    events: decideTeam({ type: 'remove-team', actorUserId, actorActiveTeamId, teamId, allowRemovingAllTeams }, state),
    result: null,
  }));
}
