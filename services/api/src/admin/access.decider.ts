/**
 * better-auth 1.7's admin access control (`plugins/admin/access/statement.ts`): what each role may do on the
 * `user` and `session` resources. `impersonate-admins` is a statement no default role holds, so a role-based
 * admin cannot impersonate another admin; the configured admin user ids pass every check.
 */
export const adminStatements = {
  user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'impersonate-admins', 'delete', 'set-password', 'set-email', 'set-phone', 'get', 'update'],
  session: ['list', 'revoke', 'delete'],
} as const;

export type Permissions = Readonly<Record<string, readonly string[]>>;

export const adminRoleStatements: Readonly<Record<string, Permissions>> = {
  admin: {
    user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'delete', 'set-password', 'set-email', 'set-phone', 'get', 'update'],
    session: ['list', 'revoke', 'delete'],
  },
  user: { user: [], session: [] },
};

/** The roles whose holders count as admins for impersonation (better-auth's `adminRoles` default). */
export const ADMIN_ROLES: readonly string[] = ['admin'];

/** The role better-auth gives a user no one gave one. */
export const DEFAULT_ROLE = 'user';

/** The roles a stored role value holds: better-auth keeps several comma-separated. */
export function rolesOf(role: string | null | undefined): string[] {
  return (role || DEFAULT_ROLE).split(',');
}

/** better-auth's `role.authorize(request)`: every resource asked is granted every action asked (AND). */
function roleGrants(statements: Permissions, asked: Permissions): boolean {
  const resources = Object.keys(asked);
  if (resources.length === 0) return false;
  return resources.every((resource) => {
    const allowed = Object.hasOwn(statements, resource) ? statements[resource]! : undefined;
    return allowed !== undefined && asked[resource]!.every((action) => allowed.includes(action));
  });
}

export interface PermissionCheck {
  readonly userId: string | null;
  readonly role: string | null | undefined;
  readonly adminUserIds: readonly string[];
  readonly permissions: Permissions;
}

/** better-auth's `hasPermission`: an admin user id passes; else any one of the user's roles granting all of it. */
export function hasAdminPermission(check: PermissionCheck): boolean {
  if (check.userId !== null && check.adminUserIds.includes(check.userId)) return true;
  return rolesOf(check.role).some((role) => {
    const statements = Object.hasOwn(adminRoleStatements, role) ? adminRoleStatements[role] : undefined;
    return statements !== undefined && roleGrants(statements, check.permissions);
  });
}

/** Whether a user counts as an admin when someone asks to impersonate them. */
export function isAdminUser(user: { readonly id: string; readonly role: string | null | undefined }, adminUserIds: readonly string[]): boolean {
  return rolesOf(user.role).some((role) => ADMIN_ROLES.includes(role.trim())) || adminUserIds.includes(user.id);
}
