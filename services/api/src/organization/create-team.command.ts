import type { Team } from '@portcullis/contracts';
import { generateId, type RequestMetadata } from '@portcullis/platform';
import { runOrganizationCommand } from './organization-model.ts';
import type { OrganizationPorts } from './ports.ts';
import { decideTeam } from './team.decider.ts';

/** create-team: a team in the organization, by a member who may, under `AUTH_ORGANIZATION_MAXIMUM_TEAMS`. */
export function createTeam(
  ports: Pick<OrganizationPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly actorUserId: string; readonly name: string },
): Promise<Team> {
  const { organizationId, actorUserId, name } = command;
  const teamId = generateId();
  return runOrganizationCommand(ports, { name: 'organization.create-team', request, organizationId, actorId: actorUserId }, ({ state }, { now }) => {
    const events = decideTeam({ type: 'create-team', actorUserId, teamId, name, maximumTeams: ports.config.organization.teams.maximumTeams }, state);
    const createdAt = now.toISOString();
    return { events, result: { id: teamId, name, organizationId, createdAt, updatedAt: createdAt } };
  });
}
