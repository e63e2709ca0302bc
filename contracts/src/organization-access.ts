/**
 * Organization roles and what they may do (spec section 6, better-auth's default statements). The api's
 * deciders check every action against this table; the permission tests walk it.
 */
export const organizationStatements = {
  organization: ['update', 'delete'],
  member: ['create', 'update', 'delete'],
  invitation: ['create', 'cancel'],
  team: ['create', 'update', 'delete'],
  ac: ['create', 'read', 'update', 'delete'],
} as const;

type OrganizationResource = keyof typeof organizationStatements;
type OrganizationAction<R extends OrganizationResource = OrganizationResource> = (typeof organizationStatements)[R][number];

export const organizationRoles = ['owner', 'admin', 'member'] as const;
export type OrganizationRole = (typeof organizationRoles)[number];

/** The creator of an organization gets this role; only its holders may hand it out or take it away. */
export const creatorRole: OrganizationRole = 'owner';

type Grants = { readonly [R in OrganizationResource]: readonly OrganizationAction<R>[] };

export const organizationRoleGrants: Readonly<Record<OrganizationRole, Grants>> = {
  owner: {
    organization: ['update', 'delete'],
    member: ['create', 'update', 'delete'],
    invitation: ['create', 'cancel'],
    team: ['create', 'update', 'delete'],
    ac: ['create', 'read', 'update', 'delete'],
  },
  admin: {
    organization: ['update'],
    member: ['create', 'update', 'delete'],
    invitation: ['create', 'cancel'],
    team: ['create', 'update', 'delete'],
    ac: ['create', 'read', 'update', 'delete'],
  },
  member: { organization: [], member: [], invitation: [], team: [], ac: ['read'] },
};

export function isOrganizationRole(value: string): value is OrganizationRole {
  return (organizationRoles as readonly string[]).includes(value);
}

/**
 * A role value as stored or sent ("admin,member", "admin, member" or ["admin", "member"]) as a list of
 * trimmed, non-empty role names: the only way roles are read, so padding can never make two checks disagree.
 */
export function parseRoleList(roles: string | readonly string[]): string[] {
  return (typeof roles === 'string' ? [roles] : roles)
    .flatMap((role) => role.split(','))
    .map((role) => role.trim())
    .filter((role) => role !== '');
}

/** The stored form of a role value: comma-separated, unpadded. */
export function formatRoles(roles: string | readonly string[]): string {
  return parseRoleList(roles).join(',');
}

export type Connector = 'AND' | 'OR';
/** A request for actions on resources: `{ member: ['create'] }`, or with an explicit connector per resource. */
export type PermissionRequest = Record<string, string[] | { actions: string[]; connector?: Connector | undefined }>;

export type AuthorizeResult = { success: true } | { success: false; error: string };

/**
 * better-auth's access check for one role: with AND every requested resource must be granted (an unknown
 * resource fails at once), with OR one granted resource is enough. Within a resource the actions are
 * combined with the resource's own connector (AND unless it says OR).
 */
export function authorizeRole(role: OrganizationRole, request: PermissionRequest, connector: Connector = 'AND'): AuthorizeResult {
  const grants = organizationRoleGrants[role] as Readonly<Record<string, readonly string[]>>;
  let anyGranted = false;
  for (const [resource, requested] of Object.entries(request)) {
    const allowed = Object.hasOwn(grants, resource) ? grants[resource] : undefined;
    if (!allowed) {
      if (connector === 'AND') return { success: false, error: `You are not allowed to access resource: ${resource}` };
      continue;
    }
    const actions = Array.isArray(requested) ? requested : requested.actions;
    const within = Array.isArray(requested) ? 'AND' : (requested.connector ?? 'AND');
    const granted =
      actions.length > 0 &&
      (within === 'OR' ? actions.some((a) => allowed.includes(a)) : actions.every((a) => allowed.includes(a)));
    if (granted) {
      anyGranted = true;
      if (connector === 'OR') return { success: true };
    } else if (connector === 'AND') {
      return { success: false, error: `unauthorized to access resource "${resource}"` };
    }
  }
  return anyGranted ? { success: true } : { success: false, error: 'Not authorized' };
}

/** A member's roles grant the request when any one of them does (roles this table does not know grant nothing). */
export function rolesGrant(roles: string | readonly string[], request: PermissionRequest, connector: Connector = 'AND'): boolean {
  return parseRoleList(roles).some((role) => isOrganizationRole(role) && authorizeRole(role, request, connector).success);
}
