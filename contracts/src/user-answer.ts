import type { User } from './api/user.ts';
import type { DomainEvent } from './events/index.ts';

/** The admin plugin's fields of a user never banned nor given a role: better-auth's defaults. */
export const unbannedUser = { role: 'user', banned: false, banReason: null, banExpires: null } as const satisfies Pick<
  User,
  'role' | 'banned' | 'banReason' | 'banExpires'
>;

/**
 * The user as better-auth answers it, folded from the events of that user's stream, each with the time it
 * was recorded. The session cache keeps its copy with this fold and sign-in folds the user stream it has
 * already read with it, so the two can only agree. Null before registration and after deletion.
 */
export function evolveUserAnswer(user: User | null, event: DomainEvent, occurredAt: string): User | null {
  if (event.type === 'user.registered.v1') {
    const u = event.data;
    return {
      id: u.userId,
      email: u.email,
      name: u.name,
      image: u.image,
      emailVerified: u.emailVerified,
      createdAt: occurredAt,
      updatedAt: occurredAt,
      ...unbannedUser,
    };
  }
  if (user === null) return null;
  switch (event.type) {
    case 'user.updated.v1': {
      const { name, image } = event.data;
      return { ...user, ...(name !== undefined ? { name } : {}), ...(image !== undefined ? { image } : {}), updatedAt: occurredAt };
    }
    case 'user.username_changed.v1': {
      const { username: _username, displayUsername: _displayUsername, ...rest } = user;
      const { username, displayUsername } = event.data;
      return {
        ...rest,
        ...(username !== null ? { username } : {}),
        ...(displayUsername !== null ? { displayUsername } : {}),
        updatedAt: occurredAt,
      };
    }
    case 'user.email_verified.v1':
      // A verification of an address the user has since left changes nothing.
      return user.email === event.data.email ? { ...user, emailVerified: true, updatedAt: occurredAt } : user;
    case 'user.email_changed.v1':
      return { ...user, email: event.data.email, emailVerified: event.data.emailVerified, updatedAt: occurredAt };
    case 'user.role_changed.v1':
      return { ...user, role: event.data.role, updatedAt: occurredAt };
    case 'user.banned.v1':
      return { ...user, banned: true, banReason: event.data.reason, banExpires: event.data.expiresAt, updatedAt: occurredAt };
    case 'user.unbanned.v1':
      return { ...user, banned: false, banReason: null, banExpires: null, updatedAt: occurredAt };
    case 'user.deleted.v1':
      return null;
    default:
      return user;
  }
}
