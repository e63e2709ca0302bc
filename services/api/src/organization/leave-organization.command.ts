import type { RequestMetadata } from '@portcullis/platform';
import { decideMember } from './member.decider.ts';
import { runOrganizationCommand } from './organization-model.ts';
import { requireOrganization, type MemberState } from './organization.state.ts';
import type { OrganizationPorts } from './ports.ts';
import { removedMemberId } from './remove-member.command.ts';

/** leave: the caller leaves the organization, unless the only owner; answers the membership that ended. */
export function leaveOrganization(
  ports: Pick<OrganizationPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly userId: string },
): Promise<MemberState> {
  const { organizationId, userId } = command;
  return runOrganizationCommand(ports, { name: 'organization.leave', request, organizationId, actorId: userId }, (loaded) => {
    const events = decideMember({ type: 'leave', userId }, loaded.state);
    const org = requireOrganization(loaded.state);
    return { events, result: org.members.get(removedMemberId(events))! };
  });
}
