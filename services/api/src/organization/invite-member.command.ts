import { DomainError, type Invitation } from '@portcullis/contracts';
import { generateId, type RequestMetadata } from '@portcullis/platform';
import { queueMail } from '../mail/mail-jobs.ts';
import { decideInvitation } from './invitation.decider.ts';
import { foldDecided, invitationAnswer } from './organization-answers.ts';
import { runOrganizationCommand } from './organization-model.ts';
import type { OrganizationPorts } from './ports.ts';

export interface InviteMember {
  readonly organizationId: string;
  readonly inviter: { readonly id: string; readonly name: string; readonly email: string };
  /** Lower-cased. */
  readonly email: string;
  /** The user the address belongs to, if any. */
  readonly invitedUserId: string | null;
  readonly role: string | readonly string[];
  readonly teamIds: readonly string[];
  readonly resend: boolean;
}

/**
 * invite-member: an invitation decided on the organization's stream (`decideInvitation`: who may invite, one
 * pending invitation per address, the limits), or the pending one sent again with `resend`; its mail is a
 * mail job appended in the same atomic write, so there is never an invitation without its mail.
 */
export function inviteMember(ports: Pick<OrganizationPorts, 'commands' | 'config'>, request: RequestMetadata, command: InviteMember): Promise<Invitation> {
  const options = ports.config.organization;
  const teams = { enabled: options.teams.enabled, maximumMembersPerTeam: options.teams.maximumMembersPerTeam };
  const { organizationId, inviter } = command;
  const newInvitationId = generateId();
  return runOrganizationCommand(ports, { name: 'organization.invite-member', request, organizationId, actorId: inviter.id }, ({ state }, unit) => {
    const now = unit.now;
    const events = decideInvitation(
      {
        type: 'invite',
        inviterId: inviter.id,
        email: command.email,
        role: command.role,
        teamIds: command.teamIds,
        invitedUserId: command.invitedUserId,
        invitationId: newInvitationId,
        now,
        expiresInSeconds: options.invitationExpiresInSeconds,
        invitationLimit: options.invitationLimit,
        teams,
        resend: command.resend,
      },
      state,
    );
    const organization = foldDecided(state, events, now);
    // One event: a new invitation, or the pending one sent again.
    const invitationId = events[0]?.type === 'organization.invitation_resent.v1' ? events[0].data.invitationId : newInvitationId;
    const invitation = organization.invitations.get(invitationId);
    if (!invitation) throw new DomainError('FAILED_TO_RETRIEVE_INVITATION');
    queueMail(unit, ports, {
      kind: 'invitation',
      userId: inviter.id,
      to: invitation.email,
      name: '',
      token: invitation.id,
      callbackURL: null,
      expiresAt: new Date(invitation.expiresAt),
      invitation: { organizationName: organization.name, inviterName: inviter.name, inviterEmail: inviter.email, role: invitation.role },
    });
    return { events, result: invitationAnswer(organizationId, invitation) };
  });
}
