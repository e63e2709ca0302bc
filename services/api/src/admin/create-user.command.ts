import { DomainError, type User } from '@portcullis/contracts';
import { generateId, hashPassword, type RequestMetadata } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { registerUser } from '../identity/register-user.command.ts';
import { initialUsernameFields } from '../identity/username.decider.ts';
import type { AdminAuthority } from './access.decider.ts';
import { decideCreatedUserRights } from './user-admin.decider.ts';

export interface CreateUser {
  readonly by: AdminAuthority;
  /** Lower-cased and checked already. */
  readonly email: string;
  readonly name: string;
  readonly image: string | null;
  readonly emailVerified: boolean;
  /** Null: no password account. better-auth checks only its upper bound here: an admin may set a short one. */
  readonly password: string | null;
  readonly role: string | null;
  readonly ban: { readonly reason: string; readonly expiresAt: string | null } | null;
}

/** create-user: a registration like a sign-up's (identity's `registerUser`), with the role and ban the admin gives. */
export async function createUser(ports: Pick<AdminPorts, 'commands' | 'config'>, request: RequestMetadata, command: CreateUser): Promise<User> {
  const passwordHash = command.password ? await hashPassword(command.password, ports.config.password.argon2) : null;
  const { by, role, ban } = command;
  const registered = await registerUser(ports, request, {
    via: 'admin.create-user',
    actor: { id: by.userId, kind: 'admin' },
    registration: {
      userId: generateId(),
      email: command.email,
      name: command.name,
      image: command.image,
      emailVerified: command.emailVerified,
      passwordHash,
      refusal: 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL',
    },
    username: initialUsernameFields({}),
    alsoOnUser: (userId) => decideCreatedUserRights({ userId, role, ban: ban ? { by, ...ban } : null }),
    verificationMail: null,
    session: null,
    whenTaken: 'refuse',
  });
  // A taken address is refused above: an admin's registration is never undisclosed.
  if (!registered.registered) throw new DomainError('USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL');
  return registered.user;
}
