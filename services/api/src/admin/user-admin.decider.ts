import { DomainError, streamModel, UserBanned, UserRoleChanged, UserUnbanned, type DomainEvent } from '@portcullis/contracts';
import { decideActingOn, DEFAULT_ROLE, locksOutOfAdmin, type AdminAuthority } from './access.decider.ts';

/** The user stream `user-<userId>` as an admin's commands decide on it. */
export type AdminUserState =
  | { status: 'none' }
  | { status: 'registered'; userId: string; role: string; banned: boolean };

export const initialAdminUserState = (): AdminUserState => ({ status: 'none' });

export function evolveAdminUser(state: AdminUserState, event: DomainEvent): AdminUserState {
  switch (event.type) {
    case 'user.registered.v1':
      return { status: 'registered', userId: event.data.userId, role: DEFAULT_ROLE, banned: false };
    case 'user.role_changed.v1':
      return state.status === 'registered' ? { ...state, role: event.data.role } : state;
    case 'user.banned.v1':
      return state.status === 'registered' ? { ...state, banned: true } : state;
    case 'user.unbanned.v1':
      return state.status === 'registered' ? { ...state, banned: false } : state;
    case 'user.deleted.v1':
      return { status: 'none' };
    default:
      return state;
  }
}

export const adminUserModel = streamModel('admin-user', 1, initialAdminUserState, evolveAdminUser);

export type AdminUserCommand =
  /** Roles as stored: several comma-separated. An admin cannot take their own admin rights away. */
  | { readonly type: 'set-role'; readonly by: AdminAuthority; readonly role: string }
  /** `expiresAt` null: until unbanned. The admin cannot ban themself. */
  | { readonly type: 'ban'; readonly by: AdminAuthority; readonly reason: string; readonly expiresAt: string | null }
  | { readonly type: 'unban'; readonly by: AdminAuthority };

/**
 * An admin's change to a user, under the rule for admins acting on admins (`decideActingOn`). Each is
 * recorded even when it changes nothing visible (a role set again, an unban of someone not banned), as
 * better-auth writes the user each time: the action is in the audit trail.
 */
export function decideAdminUser(command: AdminUserCommand, state: AdminUserState): DomainEvent[] {
  if (state.status !== 'registered') throw new DomainError('USER_NOT_FOUND');
  decideActingOn(command.by, state);
  switch (command.type) {
    case 'set-role':
      if (command.by.userId === state.userId && locksOutOfAdmin(command.by, command.role)) throw new DomainError('YOU_CANNOT_REMOVE_YOUR_OWN_ADMIN_ROLE');
      return [UserRoleChanged({ userId: state.userId, role: command.role })];
    case 'ban':
      if (command.by.userId === state.userId) throw new DomainError('YOU_CANNOT_BAN_YOURSELF');
      return [UserBanned({ userId: state.userId, reason: command.reason, expiresAt: command.expiresAt })];
    case 'unban':
      return [UserUnbanned({ userId: state.userId, reason: 'admin' })];
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
}

export interface CreatedUserRights {
  readonly userId: string;
  /** Null: the default role, which needs no event. */
  readonly role: string | null;
  /** A ban from the start (create-user's `data.banned`), by the admin creating the user. */
  readonly ban: { readonly by: AdminAuthority; readonly reason: string; readonly expiresAt: string | null } | null;
}

/**
 * What an admin's create-user adds to the registration (identity's `registerUser`) on the new user's stream:
 * the role, unless the default, and a ban, under the rule for admins acting on admins.
 */
export function decideCreatedUserRights(command: CreatedUserRights): DomainEvent[] {
  const { userId } = command;
  const role = command.role ?? DEFAULT_ROLE;
  const roleEvents = role !== DEFAULT_ROLE ? [UserRoleChanged({ userId, role })] : [];
  if (!command.ban) return roleEvents;
  const { by, ...ban } = command.ban;
  return [...roleEvents, ...decideAdminUser({ type: 'ban', by, ...ban }, { status: 'registered', userId, role, banned: false })];
}
