import { DomainError, type Team } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import { teamStateAnswer } from './organization-answers.ts';
import { runOrganizationCommand } from './organization-model.ts';
import type { OrganizationPorts } from './ports.ts';
import { decideTeam } from './team.decider.ts';

/** update-team: a team renamed by a member who may; answers the team as it is after. */
export function updateTeam(
  ports: Pick<OrganizationPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly actorUserId: string; readonly teamId: string; readonly name: string | undefined },
): Promise<Team> {
  const { organizationId, actorUserId, teamId, name } = command;
  return runOrganizationCommand(ports, { name: 'organization.update-team', request, organizationId, actorId: actorUserId }, ({ state }, { now }) => {
    const events = decideTeam({ type: 'update-team', actorUserId, teamId, name }, state);
    // The decider has found the team in a live organization, or refused.
    const team = state.status === 'active' ? state.teams.get(teamId) : undefined;
    if (!team) throw new DomainError('TEAM_NOT_FOUND');
    const renamed = events.length > 0 ? { ...team, name: name ?? team.name, updatedAt: now.toISOString() } : team;
    return { events, result: teamStateAnswer(organizationId, renamed) };
  });
}
