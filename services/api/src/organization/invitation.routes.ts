import type { FastifyInstance } from 'fastify';
import {
  creatorRole,
  DomainError,
  invitationEndpoints as endpoints,
  isValidEmail,
  parseRoleList,
  rolesGrant,
  type InvitationDetails,
} from '@portcullis/contracts';
import type { OrganizationPorts } from './ports.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { serverCall } from '../http/server-call.ts';
import { route } from '../http/declared-route.ts';
import { requireSession, resolveSession, type CurrentSession } from '../session/current-session.ts';
import { acceptInvitation } from './accept-invitation.command.ts';
import { cancelInvitation } from './cancel-invitation.command.ts';
import { inviteMember } from './invite-member.command.ts';
import type { Recipient } from './invitation.decider.ts';
import { findInvitationWithContext, invitationOrganizationId, listOrganizationInvitations, listPendingInvitationsFor, userIdByEmail } from './invitation-queries.ts';
import { invitationAnswer, memberAnswer } from './organization-answers.ts';
import { switchedSession } from './organization-model.ts';
import { rejectInvitation } from './reject-invitation.command.ts';
import { memberRole } from './team-queries.ts';

function recipientOf(current: CurrentSession): Recipient {
  return { id: current.user.id, email: current.user.email, emailVerified: current.user.emailVerified };
}

/** A command on an invitation by id: it is decided on the stream of the organization the invitation is in. */
async function organizationOfInvitation(ctx: OrganizationPorts, invitationId: string): Promise<string> {
  const organizationId = await invitationOrganizationId(ctx, invitationId);
  if (!organizationId) throw new DomainError('INVITATION_NOT_FOUND');
  return organizationId;
}

/**
 * better-auth's invitation endpoints (`routes/crud-invites.ts`). Changes are decided on the organization
 * stream (invitation.decider.ts); the invitation mail is a mail job appended in the same atomic write as the
 * invitation it announces, so there is never an invitation without its mail or a mail without its invitation.
 */
export function invitationRoutes(ctx: OrganizationPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.inviteMember, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = body.organizationId || current.session.activeOrganizationId;
      if (!organizationId) throw new DomainError('ORGANIZATION_NOT_FOUND');
      const email = body.email.toLowerCase();
      const invitedUserId = isValidEmail(email) ? await userIdByEmail(ctx, email) : null;
      const teamIds = (typeof body.teamId === 'string' ? [body.teamId] : (body.teamId ?? [])).filter((id) => id !== '');
      return inviteMember(ctx, requestMetadataOf(request), {
        organizationId,
        inviter: { id: current.user.id, name: current.user.name, email: current.user.email },
        email,
        invitedUserId,
        role: body.role,
        teamIds,
        resend: body.resend === true,
      });
    });

    route(app, endpoints.acceptInvitation, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = await organizationOfInvitation(ctx, body.invitationId);
      const accepted = await acceptInvitation(ctx, requestMetadataOf(request), { organizationId, invitationId: body.invitationId, current });
      switchedSession(ctx, request, reply, current, accepted.selection);
      return {
        invitation: invitationAnswer(organizationId, accepted.invitation),
        member: memberAnswer(organizationId, accepted.member),
      };
    });

    route(app, endpoints.rejectInvitation, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = await organizationOfInvitation(ctx, body.invitationId);
      const invitation = await rejectInvitation(ctx, requestMetadataOf(request), { organizationId, invitationId: body.invitationId, recipient: recipientOf(current) });
      return { invitation, member: null };
    });

    route(app, endpoints.cancelInvitation, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = await organizationOfInvitation(ctx, body.invitationId);
      return cancelInvitation(ctx, requestMetadataOf(request), { organizationId, invitationId: body.invitationId, byUserId: current.user.id });
    });

    route(app, endpoints.getInvitation, async (request, reply): Promise<InvitationDetails> => {
      const { query } = request;
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      if (!current) throw new DomainError('NOT_AUTHENTICATED');
      const found = await findInvitationWithContext(ctx, query.id);
      const now = ctx.clock();
      if (!found || found.invitation.status !== 'pending' || Date.parse(found.invitation.expiresAt) < now.getTime()) {
        throw new DomainError('INVITATION_NOT_FOUND');
      }
      if (found.invitation.email.toLowerCase() !== current.user.email.toLowerCase()) {
        throw new DomainError('YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
      }
      if (ctx.config.organization.requireEmailVerificationOnInvitation && !current.user.emailVerified) {
        throw new DomainError('EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION');
      }
      if (!found.organization) throw new DomainError('ORGANIZATION_NOT_FOUND');
      if (found.inviterMemberEmail === null) throw new DomainError('INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION');
      return {
        ...found.invitation,
        organizationName: found.organization.name,
        organizationSlug: found.organization.slug,
        inviterEmail: found.inviterMemberEmail,
      };
    });

    route(app, endpoints.listInvitations, async (request, reply) => {
      const { query } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = query.organizationId || current.session.activeOrganizationId;
      if (!organizationId) throw new DomainError('ORGANIZATION_ID_IS_REQUIRED');
      const role = await memberRole(ctx, organizationId, current.user.id);
      if (role === null) throw new DomainError('YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
      // Invitation ids work as invitation links: only those who may invite (and so mint links) see them.
      if (!rolesGrant(role, { invitation: ['create'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS');
      const invitations = await listOrganizationInvitations(ctx, organizationId);
      // Nor may anyone without the creator role see links that would hand it out.
      if (parseRoleList(role).includes(creatorRole)) return invitations;
      return invitations.filter((invitation) => !parseRoleList(invitation.role).includes(creatorRole));
    });

    route(app, endpoints.listUserInvitations, async (request, reply) => {
      const { query } = request;
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      if (query.email) {
        const call = serverCall(ctx, request);
        if (call === 'refused') throw new DomainError('UNAUTHORIZED');
        if (call === 'absent') throw new DomainError('USER_EMAIL_CANNOT_BE_PASSED_FOR_CLIENT_SIDE_API_CALLS');
      }
      // Listing shows invitation ids, which accept an invitation: an address not proven to be the caller's
      // must not reveal them (better-auth asks this whatever the verification setting).
      if (current && !current.user.emailVerified) throw new DomainError('EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION');
      const email = current?.user.email || query.email;
      if (!email) throw new DomainError('MISSING_SESSION_HEADERS_OR_EMAIL_QUERY_PARAMETER');
      return listPendingInvitationsFor(ctx, email);
    });
  };
}
