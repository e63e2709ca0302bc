import { generateId, type RequestMetadata } from '@portcullis/platform';
import { accountIn } from '../identity/account-model.ts';
import { decideMember } from './member.decider.ts';
import { foldDecided } from './organization-answers.ts';
import { runOrganizationCommand } from './organization-model.ts';
import type { ActiveOrganization } from './organization.state.ts';
import type { OrganizationPorts } from './ports.ts';

/**
 * add-member (a server call): a user joins in a role, and in a team if one is named, under the membership and
 * team limits; decided on the user's stream too, so a user deleted meanwhile is not added. Answers the
 * organization with the new member, and the member's id.
 */
export async function addMember(
  ports: Pick<OrganizationPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly userId: string; readonly role: string | readonly string[]; readonly teamId: string | null },
): Promise<{ readonly organization: ActiveOrganization; readonly memberId: string }> {
  const options = ports.config.organization;
  const memberId = generateId();
  const teamMemberId = generateId();
  const organization = await runOrganizationCommand(ports, { name: 'organization.add-member', request, organizationId: command.organizationId, actorId: null }, async (loaded, unit) => {
    const account = (await accountIn(unit, command.userId)).state;
    const events = decideMember(
      {
        type: 'add',
        memberId,
        userId: command.userId,
        userExists: account.status === 'active',
        role: command.role,
        teamId: command.teamId,
        teamMemberId,
        membershipLimit: options.membershipLimit,
        teams: { enabled: options.teams.enabled, maximumMembersPerTeam: options.teams.maximumMembersPerTeam },
      },
      loaded.state,
    );
    return { events, result: foldDecided(loaded.state, events, unit.now) };
  });
  return { organization, memberId };
}
