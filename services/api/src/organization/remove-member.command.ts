import type { DomainEvent, Member } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import { decideMember, type RemovalTarget } from './member.decider.ts';
import { memberAnswer } from './organization-answers.ts';
import { runOrganizationCommand } from './organization-model.ts';
import { requireOrganization } from './organization.state.ts';
import type { OrganizationPorts } from './ports.ts';

/** The member a removal or leaving decided on: decided only with its member_removed event. */
export function removedMemberId(events: readonly DomainEvent[]): string {
  for (const event of events) if (event.type === 'organization.member_removed.v1') return event.data.memberId;
  throw new Error('a removal decides organization.member_removed.v1');
}

/** remove-member: a member removed by a member who may, never the last owner (`decideMember`); answers the member removed. */
export function removeMember(
  ports: Pick<OrganizationPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly actorUserId: string; readonly target: RemovalTarget },
): Promise<Member> {
  const { organizationId, actorUserId, target } = command;
  return runOrganizationCommand(ports, { name: 'organization.remove-member', request, organizationId, actorId: actorUserId }, (loaded) => {
    const events = decideMember({ type: 'remove', actorUserId, target }, loaded.state);
    const org = requireOrganization(loaded.state);
    return { events, result: memberAnswer(org.id, org.members.get(removedMemberId(events))!) };
  });
}
