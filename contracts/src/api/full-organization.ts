import { z } from 'zod';
import { endpoint } from './endpoint.ts';
import { invitationSchema } from './invitation.ts';
import { getFullOrganizationQuerySchema, memberWithUserSchema, organizationSchema } from './organization.ts';
import { teamSchema } from './team.ts';

/**
 * GET /organization/get-full-organization: the organization with its members (and their users), its
 * invitations and, teams being on, its teams. A file of its own because it joins the three areas, and the
 * invitation contracts already build on the organization's.
 */
const fullOrganizationSchema = organizationSchema
  .extend({
    members: z.array(memberWithUserSchema),
    invitations: z
      .array(invitationSchema)
      .meta({ description: 'Only for members who may invite; creator-role invitations only for holders of that role' }),
    teams: z.array(teamSchema).optional().meta({ description: 'Present when teams are enabled' }),
  })
  .meta({ description: 'An organization with its members, invitations and teams' });
export type FullOrganization = z.infer<typeof fullOrganizationSchema>;

/** Declared here rather than with the other organization endpoints, as its answer joins the three areas. */
export const fullOrganizationEndpoints = {
  getFullOrganization: endpoint({
    operationId: 'getFullOrganization',
    method: 'GET',
    path: '/organization/get-full-organization',
    summary: 'An organization the caller is a member of, with its members, invitations and teams; null when none is active',
    tag: 'Organization',
    auth: 'session',
    query: getFullOrganizationQuerySchema,
    answer: fullOrganizationSchema.nullable(),
  }),
};
