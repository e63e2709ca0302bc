import type { RequestMetadata } from '@portcullis/platform';
import { decideMember } from './member.decider.ts';
import { foldDecided } from './organization-answers.ts';
import { runOrganizationCommand } from './organization-model.ts';
import type { ActiveOrganization } from './organization.state.ts';
import type { OrganizationPorts } from './ports.ts';

/** update-member-role: a member's role changed by a member who may (`decideMember`); answers the organization after it. */
export function updateMemberRole(
  ports: Pick<OrganizationPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly actorUserId: string; readonly memberId: string; readonly role: string | readonly string[] },
): Promise<ActiveOrganization> {
  const { organizationId, actorUserId, memberId, role } = command;
  return runOrganizationCommand(ports, { name: 'organization.update-member-role', request, organizationId, actorId: actorUserId }, (loaded, { now }) => {
    const events = decideMember({ type: 'update-role', actorUserId, memberId, role }, loaded.state);
    return { events, result: foldDecided(loaded.state, events, now) };
  });
}
