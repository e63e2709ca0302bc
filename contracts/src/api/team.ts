import { z } from 'zod';
import { coercedIdSchema } from './coerced-id.ts';
import { endpoint } from './endpoint.ts';

/**
 * Teams of an organization (better-auth's organization plugin with `teams.enabled`). Bodies and queries as
 * better-auth 1.7 takes them; answers as its adapter returns the `team` and `teamMember` rows.
 */

const idSchema = z.string().max(256);
const optionalOrganizationId = idSchema
  .optional()
  .meta({ description: "The organization the team belongs to; defaults to the session's active organization" });

/** Spec section 5: a team name has at least 1 character. */
const teamNameSchema = z.string().min(1).max(1024).meta({ description: 'The name of the team, at least 1 character' });

export const teamSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    organizationId: z.string(),
    createdAt: z.string(),
    // better-auth sets it when the team is created, so it is never absent from an answer.
    updatedAt: z.string(),
  })
  .meta({ description: 'A team' });
export type Team = z.infer<typeof teamSchema>;

const teamMemberSchema = z
  .object({ id: z.string(), teamId: z.string(), userId: z.string(), createdAt: z.string() })
  .meta({ description: 'A user in a team' });
export type TeamMember = z.infer<typeof teamMemberSchema>;

const createTeamBodySchema = z
  .object({ name: teamNameSchema, organizationId: optionalOrganizationId })
  .meta({ description: 'POST /organization/create-team' });

const updateTeamBodySchema = z
  .object({
    teamId: idSchema,
    // better-auth reads the organization from inside `data`, not beside it.
    data: z.object({ name: teamNameSchema.optional(), organizationId: optionalOrganizationId }),
  })
  .meta({ description: 'POST /organization/update-team' });

const removeTeamBodySchema = z
  .object({ teamId: idSchema, organizationId: optionalOrganizationId })
  .meta({ description: 'POST /organization/remove-team' });

const removeTeamAnswerSchema = z.object({ message: z.literal('Team removed successfully.') });

const listTeamsQuerySchema = z
  .object({ organizationId: optionalOrganizationId })
  .meta({ description: 'GET /organization/list-teams' });

const listUserTeamsQuerySchema = z
  .object({
    userId: idSchema.optional().meta({ description: 'Another member whose teams to list; needs member:update' }),
    organizationId: optionalOrganizationId,
  })
  .meta({ description: 'GET /organization/list-user-teams' });

const setActiveTeamBodySchema = z
  .object({
    teamId: idSchema
      .nullable()
      .optional()
      .meta({ description: 'The team to work in; null clears it, absent keeps the current one' }),
  })
  .meta({ description: 'POST /organization/set-active-team' });

const listTeamMembersQuerySchema = z
  .object({ teamId: idSchema.optional().meta({ description: "Defaults to the session's active team" }) })
  .meta({ description: 'GET /organization/list-team-members' });

const teamMemberChangeBody = z.object({
  teamId: idSchema,
  userId: coercedIdSchema,
  organizationId: optionalOrganizationId,
});

const addTeamMemberBodySchema = teamMemberChangeBody.meta({ description: 'POST /organization/add-team-member' });
const removeTeamMemberBodySchema = teamMemberChangeBody.meta({ description: 'POST /organization/remove-team-member' });

const removeTeamMemberAnswerSchema = z.object({ message: z.literal('Team member removed successfully.') });

const listTeamsAnswerSchema = z.array(teamSchema);
const listTeamMembersAnswerSchema = z.array(teamMemberSchema);

const tag = 'Organization';

/** better-auth's team endpoints (`routes/crud-team.ts`): registered only with teams enabled (404 otherwise). */
export const teamEndpoints = {
  createTeam: endpoint({
    operationId: 'createTeam',
    method: 'POST',
    path: '/organization/create-team',
    summary: 'Creates a team in an organization',
    tag,
    auth: 'session',
    body: createTeamBodySchema,
    answer: teamSchema,
  }),
  updateTeam: endpoint({
    operationId: 'updateTeam',
    method: 'POST',
    path: '/organization/update-team',
    summary: 'Renames a team',
    tag,
    auth: 'session',
    body: updateTeamBodySchema,
    answer: teamSchema,
  }),
  removeTeam: endpoint({
    operationId: 'removeTeam',
    method: 'POST',
    path: '/organization/remove-team',
    summary: 'Removes a team from its organization',
    tag,
    auth: 'session',
    body: removeTeamBodySchema,
    answer: removeTeamAnswerSchema,
  }),
  listTeams: endpoint({
    operationId: 'listTeams',
    method: 'GET',
    path: '/organization/list-teams',
    summary: "An organization's teams, for its members",
    tag,
    auth: 'session',
    query: listTeamsQuerySchema,
    answer: listTeamsAnswerSchema,
  }),
  listUserTeams: endpoint({
    operationId: 'listUserTeams',
    method: 'GET',
    path: '/organization/list-user-teams',
    summary: "The teams the caller is in, or (for who may update members) another member's",
    tag,
    auth: 'session',
    query: listUserTeamsQuerySchema,
    answer: listTeamsAnswerSchema,
  }),
  setActiveTeam: endpoint({
    operationId: 'setActiveTeam',
    method: 'POST',
    path: '/organization/set-active-team',
    summary: "Sets (or with null clears) the session's active team; answers it, or null",
    tag,
    auth: 'session',
    body: setActiveTeamBodySchema,
    answer: teamSchema.nullable(),
  }),
  listTeamMembers: endpoint({
    operationId: 'listTeamMembers',
    method: 'GET',
    path: '/organization/list-team-members',
    summary: "A team's members, for members of the team",
    tag,
    auth: 'session',
    query: listTeamMembersQuerySchema,
    answer: listTeamMembersAnswerSchema,
  }),
  addTeamMember: endpoint({
    operationId: 'addTeamMember',
    method: 'POST',
    path: '/organization/add-team-member',
    summary: 'Puts a member of the organization in a team; answers the team membership',
    tag,
    auth: 'session',
    body: addTeamMemberBodySchema,
    answer: teamMemberSchema,
  }),
  removeTeamMember: endpoint({
    operationId: 'removeTeamMember',
    method: 'POST',
    path: '/organization/remove-team-member',
    summary: 'Takes a user out of a team',
    tag,
    auth: 'session',
    body: removeTeamMemberBodySchema,
    answer: removeTeamMemberAnswerSchema,
  }),
};
