import { z } from 'zod';
import { endpoint } from './endpoint.ts';
import { memberSchema, roleInputSchema } from './organization.ts';

/**
 * Invitations to an organization (better-auth's organization plugin). Bodies and queries as better-auth 1.7
 * takes them; answers as its adapter returns the `invitation` row. Statuses as spec section 4.
 */

const idSchema = z.string().max(256);

const invitationStatuses = ['pending', 'accepted', 'rejected', 'canceled'] as const;
const invitationStatusSchema = z.enum(invitationStatuses);
export type InvitationStatusValue = z.infer<typeof invitationStatusSchema>;

export const invitationSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    email: z.string().meta({ description: 'The invited address, lower-cased' }),
    role: z.string().meta({ description: 'The role(s) the member will get, comma-separated' }),
    status: invitationStatusSchema,
    teamId: z.string().nullable().meta({ description: 'The team(s) the member will join, comma-separated; null when none' }),
    inviterId: z.string().meta({ description: 'The user who sent the invitation' }),
    expiresAt: z.string(),
    createdAt: z.string(),
  })
  .meta({ description: 'An invitation to an organization' });
export type Invitation = z.infer<typeof invitationSchema>;

const inviteMemberBodySchema = z
  .object({
    email: z.string().max(1024).meta({ description: 'The address to invite' }),
    role: roleInputSchema,
    organizationId: idSchema.optional().meta({ description: "Defaults to the session's active organization" }),
    resend: z
      .boolean()
      .optional()
      .meta({ description: 'Send an invitation still open to the address again (refused as already invited otherwise)' }),
    teamId: z
      .union([idSchema, z.array(idSchema).max(64)])
      .optional()
      .meta({ description: 'The team(s) of the organization the member will join' }),
  })
  .meta({ description: 'POST /organization/invite-member' });

const invitationIdBody = z.object({ invitationId: idSchema.meta({ description: 'The invitation, as its mail link carries it' }) });

const acceptInvitationBodySchema = invitationIdBody.meta({ description: 'POST /organization/accept-invitation' });
const rejectInvitationBodySchema = invitationIdBody.meta({ description: 'POST /organization/reject-invitation' });
const cancelInvitationBodySchema = invitationIdBody.meta({ description: 'POST /organization/cancel-invitation' });

const acceptInvitationAnswerSchema = z.object({ invitation: invitationSchema, member: memberSchema });
const rejectInvitationAnswerSchema = z.object({ invitation: invitationSchema, member: z.null() });

const getInvitationQuerySchema = z.object({ id: idSchema }).meta({ description: 'GET /organization/get-invitation' });

const invitationDetailsSchema = invitationSchema
  .extend({ organizationName: z.string(), organizationSlug: z.string(), inviterEmail: z.string() })
  .meta({ description: 'An invitation as its recipient sees it' });
export type InvitationDetails = z.infer<typeof invitationDetailsSchema>;

const listInvitationsQuerySchema = z
  .object({ organizationId: idSchema.optional().meta({ description: "Defaults to the session's active organization" }) })
  .meta({ description: 'GET /organization/list-invitations' });
const listInvitationsAnswerSchema = z.array(invitationSchema);

const listUserInvitationsQuerySchema = z
  .object({ email: z.string().max(1024).optional().meta({ description: 'Whose invitations: server calls only' }) })
  .meta({ description: 'GET /organization/list-user-invitations' });
const userInvitationSchema = invitationSchema.extend({ organizationName: z.string() });
const listUserInvitationsAnswerSchema = z.array(userInvitationSchema);

const tag = 'Organization';

/** better-auth's invitation endpoints (`routes/crud-invites.ts`). */
export const invitationEndpoints = {
  inviteMember: endpoint({
    operationId: 'inviteMember',
    method: 'POST',
    path: '/organization/invite-member',
    summary: 'Invites an address to an organization and mails it the invitation; a pending one is sent again',
    tag,
    auth: 'session',
    body: inviteMemberBodySchema,
    answer: invitationSchema,
  }),
  acceptInvitation: endpoint({
    operationId: 'acceptInvitation',
    method: 'POST',
    path: '/organization/accept-invitation',
    summary: "Accepts an invitation to the caller's address: the caller becomes a member, working in the organization",
    tag,
    auth: 'session',
    body: acceptInvitationBodySchema,
    answer: acceptInvitationAnswerSchema,
  }),
  rejectInvitation: endpoint({
    operationId: 'rejectInvitation',
    method: 'POST',
    path: '/organization/reject-invitation',
    summary: "Rejects an invitation to the caller's address",
    tag,
    auth: 'session',
    body: rejectInvitationBodySchema,
    answer: rejectInvitationAnswerSchema,
  }),
  cancelInvitation: endpoint({
    operationId: 'cancelInvitation',
    method: 'POST',
    path: '/organization/cancel-invitation',
    summary: 'Withdraws a pending invitation',
    tag,
    auth: 'session',
    body: cancelInvitationBodySchema,
    answer: invitationSchema,
  }),
  getInvitation: endpoint({
    operationId: 'getInvitation',
    method: 'GET',
    path: '/organization/get-invitation',
    summary: "A pending invitation to the caller's address, with its organization and inviter",
    tag,
    auth: 'session',
    query: getInvitationQuerySchema,
    answer: invitationDetailsSchema,
  }),
  listInvitations: endpoint({
    operationId: 'listInvitations',
    method: 'GET',
    path: '/organization/list-invitations',
    summary: "An organization's invitations, for members who may invite",
    tag,
    auth: 'session',
    query: listInvitationsQuerySchema,
    answer: listInvitationsAnswerSchema,
  }),
  listUserInvitations: endpoint({
    operationId: 'listUserInvitations',
    method: 'GET',
    path: '/organization/list-user-invitations',
    summary: "The pending invitations to the caller's verified address, or (server calls) to `email`",
    tag,
    // A server call with x-api-key may ask for `email` without a session.
    auth: 'session-or-server',
    query: listUserInvitationsQuerySchema,
    answer: listUserInvitationsAnswerSchema,
  }),
};
