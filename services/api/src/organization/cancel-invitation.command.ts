import { DomainError, type Invitation } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import { decideInvitation } from './invitation.decider.ts';
import { foldDecided, invitationAnswer } from './organization-answers.ts';
import { runOrganizationCommand } from './organization-model.ts';
import type { OrganizationPorts } from './ports.ts';

/** cancel-invitation: a member who may cancels a pending invitation; answers it as canceled. */
export function cancelInvitation(
  ports: Pick<OrganizationPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly invitationId: string; readonly byUserId: string },
): Promise<Invitation> {
  const { organizationId, invitationId, byUserId } = command;
  return runOrganizationCommand(ports, { name: 'organization.cancel-invitation', request, organizationId, actorId: byUserId }, ({ state }, { now }) => {
    const events = decideInvitation({ type: 'cancel', invitationId, byUserId }, state);
    const canceled = foldDecided(state, events, now).invitations.get(invitationId);
    if (!canceled) throw new DomainError('FAILED_TO_RETRIEVE_INVITATION');
    return { events, result: invitationAnswer(organizationId, canceled) };
  });
}
