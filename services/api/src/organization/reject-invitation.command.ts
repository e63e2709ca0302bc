import { DomainError, type Invitation } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import { decideInvitation, type Recipient } from './invitation.decider.ts';
import { foldDecided, invitationAnswer } from './organization-answers.ts';
import { runOrganizationCommand } from './organization-model.ts';
import type { OrganizationPorts } from './ports.ts';

/** reject-invitation: the recipient declines a pending invitation; answers it as rejected. */
export function rejectInvitation(
  ports: Pick<OrganizationPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly invitationId: string; readonly recipient: Recipient },
): Promise<Invitation> {
  const { organizationId, invitationId, recipient } = command;
  return runOrganizationCommand(ports, { name: 'organization.reject-invitation', request, organizationId, actorId: recipient.id }, ({ state }, { now }) => {
    const events = decideInvitation(
      { type: 'reject', invitationId, recipient, now, requireEmailVerification: ports.config.organization.requireEmailVerificationOnInvitation },
      state,
    );
    const rejected = foldDecided(state, events, now).invitations.get(invitationId);
    if (!rejected) throw new DomainError('FAILED_TO_RETRIEVE_INVITATION');
    return { events, result: invitationAnswer(organizationId, rejected) };
  });
}
