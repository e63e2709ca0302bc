import { DomainError } from '@portcullis/contracts';

export type Permissions = Readonly<Record<string, readonly string[]>>;

/**
 * better-auth 1.7's admin access control (`plugins/admin/access/statement.ts`): what each role may do on the
 * `user` and `session` resources. No role holds `impersonate-admins`, so a role admin cannot impersonate
 * another admin; the configured admin user ids pass every check.
 */
const adminRoleStatements: Readonly<Record<string, Permissions>> = {
  admin: {
    user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'delete', 'set-password', 'set-email', 'set-phone', 'get', 'update'],
    session: ['list', 'revoke', 'delete'],
  },
  user: { user: [], session: [] },
};

/** Every role the admin plugin defines (what the security view counts holders of). */
export const adminRoleNames: readonly string[] = Object.keys(adminRoleStatements);

/** The roles whose holders count as admins for impersonation (better-auth's `adminRoles` default). */
const ADMIN_ROLES: readonly string[] = ['admin'];

/** The role better-auth gives a user no one gave one. */
export const DEFAULT_ROLE = 'user';

/** The roles a stored role value holds: better-auth keeps several comma-separated. */
function rolesOf(role: string | null | undefined): string[] {
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

/** Whether a user counts as an admin: holding an admin role, or listed in ADMIN_USER_IDS. */
export function isAdminUser(user: { readonly id: string; readonly role: string | null | undefined }, adminUserIds: readonly string[]): boolean {
  return rolesOf(user.role).some((role) => ADMIN_ROLES.includes(role.trim())) || adminUserIds.includes(user.id);
}

/** The admin a command acts for, with what decides their reach: the ADMIN_USER_IDS list of this deployment. */
export interface AdminAuthority {
  readonly userId: string;
  readonly adminUserIds: readonly string[];
}

/** The user an admin action changes, as the user's stream holds it. */
export interface AdminTarget {
  readonly userId: string;
  readonly role: string | null | undefined;
}

/**
 * The one rule for an admin acting on a user (set a password, ban or unban, remove, set a role, revoke
 * sessions, update, impersonate): a role admin acts on non-admins only, and only an ADMIN_USER_IDS admin
 * acts on admins; anyone may act on themself, but for what would lock them out (each command refuses that
 * itself: banning or removing yourself, dropping your own admin role). better-auth guards impersonation
 * alone (`impersonate-admins`), so a role admin could set another admin's password and sign in as them.
 */
export function decideActingOn(by: AdminAuthority, target: AdminTarget, refusal: 'YOU_CANNOT_ACT_ON_ADMINS' | 'YOU_CANNOT_IMPERSONATE_ADMINS' = 'YOU_CANNOT_ACT_ON_ADMINS'): void {
  if (by.userId === target.userId || by.adminUserIds.includes(by.userId)) return;
  if (isAdminUser({ id: target.userId, role: target.role }, by.adminUserIds)) throw new DomainError(refusal);
}

/** Whether a role takes a role admin's admin rights away: what they may not do to themself. */
export function locksOutOfAdmin(by: AdminAuthority, newRole: string): boolean {
  return !isAdminUser({ id: by.userId, role: newRole }, by.adminUserIds);
}
