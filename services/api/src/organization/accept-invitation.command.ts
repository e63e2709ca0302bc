import { DomainError } from '@portcullis/contracts';
import { generateId, type RequestMetadata } from '@portcullis/platform';
import type { CurrentSession } from '../session/current-session.ts';
import { decideInvitation, invitationTeamIds } from './invitation.decider.ts';
import { foldDecided } from './organization-answers.ts';
import { prepareSwitch, runOrganizationCommand, type ActiveSelection } from './organization-model.ts';
import { memberByUserId, type InvitationState, type MemberState } from './organization.state.ts';
import type { OrganizationPorts } from './ports.ts';

/**
 * accept-invitation: the recipient (the signed-in user, by address) joins in the invited role, under the
 * membership limit, and their session works in the organization from the same append on. As better-auth,
 * an invitation into one team makes it the active team too; a team active in another organization would not
 * belong to the new one, so it is let go (better-auth keeps it).
 */
export async function acceptInvitation(
  ports: Pick<OrganizationPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly invitationId: string; readonly current: CurrentSession },
): Promise<{ readonly invitation: InvitationState; readonly member: MemberState; readonly selection: ActiveSelection }> {
  const options = ports.config.organization;
  const teams = { enabled: options.teams.enabled, maximumMembersPerTeam: options.teams.maximumMembersPerTeam };
  const { organizationId, invitationId, current } = command;
  const memberId = generateId();
  return runOrganizationCommand(ports, { name: 'organization.accept-invitation', request, organizationId, actorId: current.user.id }, async ({ state }, unit) => {
    const { now } = unit;
    const events = decideInvitation(
      {
        type: 'accept',
        invitationId,
        recipient: { id: current.user.id, email: current.user.email, emailVerified: current.user.emailVerified },
        memberId,
        teamMemberIdFor: () => generateId(),
        now,
        requireEmailVerification: options.requireEmailVerificationOnInvitation,
        membershipLimit: options.membershipLimit,
        teams,
      },
      state,
    );
    const organization = foldDecided(state, events, now);
    const invitation = organization.invitations.get(invitationId);
    const member = memberByUserId(organization, current.user.id);
    if (!invitation || !member) throw new DomainError('FAILED_TO_RETRIEVE_INVITATION');
    const joinedTeams = teams.enabled ? invitationTeamIds(invitation) : [];
    const keptTeam = current.session.activeOrganizationId === organizationId ? current.session.activeTeamId : null;
    const selection = { activeOrganizationId: organizationId, activeTeamId: joinedTeams.length === 1 ? joinedTeams[0]! : keptTeam };
    return { events, result: { invitation, member, selection }, alsoAppend: await prepareSwitch(unit, current, selection) };
  });
}
