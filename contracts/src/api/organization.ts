import { z } from 'zod';
import { coercedIdSchema } from './coerced-id.ts';
import { endpoint } from './endpoint.ts';
import { isValidSlug, normalizeSlug } from '../organization-slug.ts';
import { imageUrlSchema } from './user-fields.ts';
import { statusAnswerSchema } from './user.ts';

/**
 * Organizations and their members (better-auth's organization plugin). Bodies and queries as better-auth 1.7
 * takes them; answers as its adapter returns the `organization` and `member` rows, dates as ISO strings and
 * metadata as the object it was given (stored as its JSON text).
 */

const idSchema = z.string().max(256);
/** A slug as sent, in the form it is compared and stored in (see `normalizeSlug`). */
const normalizedSlug = z.string().max(512).transform(normalizeSlug);
const slugSchema = normalizedSlug
  .pipe(z.string().min(1).refine(isValidSlug, 'Invalid slug: letters a-z and digits, joined by single -, _ or ., at most 100'))
  .meta({ description: 'Unique across organizations, compared in its NFKC form, lower case and trimmed (answered in that form)' });
const nameSchema = z.string().min(1).max(1024);
/** A logo under the rule of a user's image: a `javascript:` URL in an `<img>` or a link runs in the app's origin. */
const logoSchema = imageUrlSchema;
const metadataSchema = z.record(z.string(), z.any()).meta({ description: 'A record of string to any, stored as its JSON text' });

/** A role value as sent: one role, a comma-separated list, or an array of either. */
export const roleInputSchema = z
  .union([z.string().max(1024), z.array(z.string().max(256)).max(32)])
  .meta({ description: 'A role, a comma-separated list of roles, or an array of roles. Eg: ["admin", "member"]' });

const activeOrganizationFallback = "Defaults to the session's active organization";

const createOrganizationBodySchema = z
  .object({
    name: nameSchema,
    slug: slugSchema,
    userId: coercedIdSchema
      .optional()
      .meta({ description: 'The creator, for server calls only (AUTH_SERVER_API_KEY); else the signed-in user' }),
    logo: logoSchema.nullish(),
    metadata: metadataSchema.optional(),
    keepCurrentActiveOrganization: z.boolean().optional().meta({ description: 'Leave the session working in its current organization' }),
  })
  .meta({ description: 'POST /organization/create' });

const checkSlugBodySchema = z
  .object({ slug: slugSchema.meta({ description: 'The slug to check, in any case or width. Eg: "my-org"' }) })
  .meta({ description: 'POST /organization/check-slug' });

const updateOrganizationBodySchema = z
  .object({
    data: z.object({
      name: nameSchema.optional(),
      slug: slugSchema.optional(),
      logo: logoSchema.nullish(),
      metadata: metadataSchema.optional(),
    }),
    organizationId: idSchema.optional().meta({ description: activeOrganizationFallback }),
  })
  .meta({ description: 'POST /organization/update' });

const deleteOrganizationBodySchema = z
  .object({ organizationId: idSchema })
  .meta({ description: 'POST /organization/delete' });

const getOrganizationQuerySchema = z
  .object({
    organizationId: idSchema.optional(),
    organizationSlug: normalizedSlug.optional().meta({ description: 'Takes precedence over organizationId' }),
  })
  .meta({ description: 'GET /organization/get-organization' });

export const getFullOrganizationQuerySchema = getOrganizationQuerySchema
  .extend({
    membersLimit: z
      .union([z.number(), z.string().regex(/^\d+$/).transform(Number)])
      .pipe(z.number().int().min(1))
      .optional()
      .meta({ description: 'At most this many members; the membership limit by default' }),
  })
  .meta({ description: 'GET /organization/get-full-organization' });

const setActiveOrganizationBodySchema = z
  .object({
    organizationId: idSchema
      .nullable()
      .optional()
      .meta({ description: 'The organization to work in; null clears it; absent keeps the current one' }),
    organizationSlug: normalizedSlug.optional().meta({ description: 'Used when organizationId is absent' }),
  })
  .meta({ description: 'POST /organization/set-active' });

const permissionsSchema = z
  .record(z.string().max(256), z.array(z.string().max(256)).max(64))
  .meta({ description: 'Actions wanted per resource, all of them required. Eg: { "member": ["create"] }' });

/**
 * better-auth's body: exactly one of `permissions` and the deprecated `permission` (which better-auth 1.7
 * accepts and then ignores; here it counts the same).
 */
const hasPermissionBodySchema = z
  .object({
    organizationId: idSchema.optional().meta({ description: activeOrganizationFallback }),
    permissions: permissionsSchema.optional(),
    permission: permissionsSchema.optional().meta({ description: 'Deprecated: use permissions' }),
  })
  .refine((body) => (body.permissions === undefined) !== (body.permission === undefined), {
    message: 'Exactly one of permissions and permission is required',
    path: ['permissions'],
  })
  .meta({ description: 'POST /organization/has-permission' });

const hasPermissionAnswerSchema = z.object({ error: z.null(), success: z.boolean() });

const addMemberBodySchema = z
  .object({
    userId: coercedIdSchema,
    role: roleInputSchema,
    organizationId: idSchema.optional().meta({ description: activeOrganizationFallback }),
    teamId: idSchema.optional().meta({ description: 'Also put the new member in this team' }),
  })
  .meta({ description: 'POST /organization/add-member (server calls only)' });

const updateMemberRoleBodySchema = z
  .object({
    role: roleInputSchema,
    memberId: idSchema,
    organizationId: idSchema.optional().meta({ description: activeOrganizationFallback }),
  })
  .meta({ description: 'POST /organization/update-member-role' });

const removeMemberBodySchema = z
  .object({
    memberIdOrEmail: z.string().max(320).meta({ description: "A member id, or (containing '@') the member's email" }),
    organizationId: idSchema.optional().meta({ description: activeOrganizationFallback }),
  })
  .meta({ description: 'POST /organization/remove-member' });

const leaveOrganizationBodySchema = z
  .object({ organizationId: idSchema })
  .meta({ description: 'POST /organization/leave' });

/** The member columns list-members may sort and filter by. */
const memberFields = ['id', 'organizationId', 'userId', 'role', 'teamId', 'createdAt'] as const;
const filterOperators = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'not_in', 'contains', 'starts_with', 'ends_with'] as const;

const queryNumber = z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]).pipe(z.number().int().min(0));

const listMembersQuerySchema = z
  .object({
    limit: queryNumber.optional().meta({ description: 'At most this many; the membership limit by default' }),
    offset: queryNumber.optional(),
    sortBy: z.enum(memberFields).optional(),
    sortDirection: z.enum(['asc', 'desc']).optional(),
    filterField: z.enum(memberFields).optional(),
    filterValue: z
      .union([z.string().max(1024), z.number(), z.boolean(), z.array(z.string().max(1024)).max(100), z.array(z.number()).max(100)])
      .optional(),
    filterOperator: z.enum(filterOperators).optional(),
    organizationId: idSchema.optional().meta({ description: activeOrganizationFallback }),
    organizationSlug: normalizedSlug.optional(),
  })
  .meta({ description: 'GET /organization/list-members' });
export type ListMembersQuery = z.infer<typeof listMembersQuerySchema>;

const getActiveMemberRoleQuerySchema = z
  .object({
    userId: idSchema.optional().meta({ description: "Another member's role; the caller's by default" }),
    organizationId: idSchema.optional().meta({ description: activeOrganizationFallback }),
    organizationSlug: normalizedSlug.optional(),
  })
  .meta({ description: 'GET /organization/get-active-member-role' });

export const organizationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    logo: z.string().nullable(),
    metadata: z.record(z.string(), z.any()).nullable(),
    createdAt: z.string(),
  })
  .meta({ description: 'An organization' });
export type Organization = z.infer<typeof organizationSchema>;

export const memberSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    userId: z.string(),
    role: z.string().meta({ description: 'One role or several, comma-separated' }),
    teamId: z.string().optional().meta({ description: 'Present when the member joined into a team' }),
    createdAt: z.string(),
  })
  .meta({ description: 'A member of an organization' });
export type Member = z.infer<typeof memberSchema>;

const memberUserSchema = z.object({ id: z.string(), name: z.string(), email: z.string(), image: z.string().nullable() });

export const memberWithUserSchema = memberSchema.extend({ user: memberUserSchema });
export type MemberWithUser = z.infer<typeof memberWithUserSchema>;

const createOrganizationAnswerSchema = organizationSchema.extend({ members: z.array(memberSchema) });
export type CreateOrganizationAnswer = z.infer<typeof createOrganizationAnswerSchema>;

const listOrganizationsAnswerSchema = z.array(organizationSchema);
const listMembersAnswerSchema = z.object({ members: z.array(memberWithUserSchema), total: z.number().int() });
const activeMemberRoleAnswerSchema = z.object({ role: z.string() });
const removeMemberAnswerSchema = z.object({ member: z.union([memberWithUserSchema, memberSchema]) });

const tag = 'Organization';

/** better-auth's organization and member endpoints (`routes/crud-org.ts`, `routes/crud-members.ts`) and has-permission. */
export const organizationEndpoints = {
  createOrganization: endpoint({
    operationId: 'createOrganization',
    method: 'POST',
    path: '/organization/create',
    summary: 'Creates an organization with the caller (or, by server call, `userId`) as its creator-role member',
    tag,
    // A server call with x-api-key may create for `userId` without a session.
    auth: 'session-or-server',
    body: createOrganizationBodySchema,
    answer: createOrganizationAnswerSchema,
  }),
  checkSlug: endpoint({
    operationId: 'checkSlug',
    method: 'POST',
    path: '/organization/check-slug',
    summary: 'Whether a slug is free (ORGANIZATION_SLUG_ALREADY_TAKEN otherwise); for the signed-in or server calls',
    tag,
    auth: 'session-or-server',
    body: checkSlugBodySchema,
    answer: statusAnswerSchema,
  }),
  updateOrganization: endpoint({
    operationId: 'updateOrganization',
    method: 'POST',
    path: '/organization/update',
    summary: "Changes an organization's name, slug, logo or metadata",
    tag,
    auth: 'session',
    body: updateOrganizationBodySchema,
    answer: organizationSchema,
  }),
  deleteOrganization: endpoint({
    operationId: 'deleteOrganization',
    method: 'POST',
    path: '/organization/delete',
    summary: 'Deletes an organization and frees its slug',
    tag,
    auth: 'session',
    body: deleteOrganizationBodySchema,
    answer: organizationSchema,
  }),
  listOrganizations: endpoint({
    operationId: 'listOrganizations',
    method: 'GET',
    path: '/organization/list',
    summary: 'The organizations the caller is a member of',
    tag,
    auth: 'session',
    answer: listOrganizationsAnswerSchema,
  }),
  setActiveOrganization: endpoint({
    operationId: 'setActiveOrganization',
    method: 'POST',
    path: '/organization/set-active',
    summary: "Sets (or with null clears) the session's active organization; answers it, or null",
    tag,
    auth: 'session',
    body: setActiveOrganizationBodySchema,
    answer: organizationSchema.nullable(),
  }),
  getOrganization: endpoint({
    operationId: 'getOrganization',
    method: 'GET',
    path: '/organization/get-organization',
    summary: 'An organization the caller is a member of, by slug or id, else the active one; null when none is active',
    tag,
    auth: 'session',
    query: getOrganizationQuerySchema,
    answer: organizationSchema.nullable(),
  }),
  hasPermission: endpoint({
    operationId: 'hasPermission',
    method: 'POST',
    path: '/organization/has-permission',
    summary: "Whether the caller's role in an organization grants all the permissions asked",
    tag,
    auth: 'session',
    body: hasPermissionBodySchema,
    answer: hasPermissionAnswerSchema,
  }),
  getActiveMember: endpoint({
    operationId: 'getActiveMember',
    method: 'GET',
    path: '/organization/get-active-member',
    summary: "The caller's membership of the active organization, with its user",
    tag,
    auth: 'session',
    answer: memberWithUserSchema,
  }),
  getActiveMemberRole: endpoint({
    operationId: 'getActiveMemberRole',
    method: 'GET',
    path: '/organization/get-active-member-role',
    summary: "The caller's role in an organization, or another member's",
    tag,
    auth: 'session',
    query: getActiveMemberRoleQuerySchema,
    answer: activeMemberRoleAnswerSchema,
  }),
  listMembers: endpoint({
    operationId: 'listMembers',
    method: 'GET',
    path: '/organization/list-members',
    summary: "A page of an organization's members with their users, sorted and filtered, and how many match",
    tag,
    auth: 'session',
    query: listMembersQuerySchema,
    answer: listMembersAnswerSchema,
  }),
  addMember: endpoint({
    operationId: 'addMember',
    method: 'POST',
    path: '/organization/add-member',
    summary: 'Makes a user a member directly, without an invitation (server calls only; 404 to anyone else)',
    tag,
    auth: 'server',
    body: addMemberBodySchema,
    answer: memberSchema,
  }),
  updateMemberRole: endpoint({
    operationId: 'updateMemberRole',
    method: 'POST',
    path: '/organization/update-member-role',
    summary: "Changes a member's role",
    tag,
    auth: 'session',
    body: updateMemberRoleBodySchema,
    answer: memberSchema,
  }),
  removeMember: endpoint({
    operationId: 'removeMember',
    method: 'POST',
    path: '/organization/remove-member',
    summary: 'Removes a member, named by member id or email',
    tag,
    auth: 'session',
    body: removeMemberBodySchema,
    answer: removeMemberAnswerSchema,
  }),
  leaveOrganization: endpoint({
    operationId: 'leaveOrganization',
    method: 'POST',
    path: '/organization/leave',
    summary: 'Ends the caller\'s membership of an organization',
    tag,
    auth: 'session',
    body: leaveOrganizationBodySchema,
    answer: memberWithUserSchema,
  }),
};
