import {
  CredentialAccountCreated,
  DomainError,
  EmailReserved,
  streamModel,
  UserBanned,
  UserRegistered,
  UserRoleChanged,
  UserUnbanned,
  type DomainEvent,
} from '@portcullis/contracts';
import type { EmailReservationState } from '@portcullis/contracts';
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

export interface CreateUser {
  readonly userId: string;
  /** Lower-cased and checked already. */
  readonly email: string;
  readonly name: string;
  readonly image: string | null;
  readonly emailVerified: boolean;
  /** Null: no password account (a user who signs in some other way). */
  readonly credential: { readonly accountId: string; readonly passwordHash: string } | null;
  /** Null: the default role, which needs no event. */
  readonly role: string | null;
}

export interface UserCreation {
  readonly reservation: DomainEvent[];
  readonly user: DomainEvent[];
}

/** A user an admin creates: the address reserved (refused when taken) and the user with its role and password account. */
export function decideCreateUser(command: CreateUser, reservation: EmailReservationState): UserCreation {
  if (reservation.status === 'reserved') throw new DomainError('USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL');
  const { userId } = command;
  return {
    reservation: [EmailReserved({ email: command.email, userId })],
    user: [
      UserRegistered({ userId, email: command.email, name: command.name, image: command.image, emailVerified: command.emailVerified }),
      ...(command.credential ? [CredentialAccountCreated({ userId, ...command.credential })] : []),
      ...(command.role !== null && command.role !== DEFAULT_ROLE ? [UserRoleChanged({ userId, role: command.role })] : []),
    ],
  };
}
