import type { TeamMember } from '@portcullis/contracts';
import { generateId, type RequestMetadata } from '@portcullis/platform';
import { runOrganizationCommand } from './organization-model.ts';
import type { OrganizationPorts } from './ports.ts';
import { decideTeam } from './team.decider.ts';

/**
 * add-team-member: a member of the organization joins a team, under the team's member limit; answers the
 * membership, or null when they were in it already (nothing decided).
 */
export function addTeamMember(
  ports: Pick<OrganizationPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly actorUserId: string; readonly teamId: string; readonly userId: string },
): Promise<TeamMember | null> {
  const { organizationId, actorUserId, teamId, userId } = command;
  const teamMemberId = generateId();
  const maximumMembersPerTeam = ports.config.organization.teams.maximumMembersPerTeam;
  return runOrganizationCommand(ports, { name: 'organization.add-team-member', request, organizationId, actorId: actorUserId }, ({ state }, { now }) => {
    const events = decideTeam({ type: 'add-team-member', actorUserId, teamId, userId, teamMemberId, maximumMembersPerTeam }, state);
    return { events, result: events.length > 0 ? { id: teamMemberId, teamId, userId, createdAt: now.toISOString() } : null };
  });
}
