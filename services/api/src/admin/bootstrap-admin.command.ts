import { DomainError, type User } from '@portcullis/contracts';
import { generateId, hashPassword, systemRequest } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { registerUser } from '../identity/register-user.command.ts';
import { initialUsernameFields } from '../identity/username.decider.ts';
import { decideCreatedUserRights } from './user-admin.decider.ts';

/**
 * The first admin of a deployment (AUTH_BOOTSTRAP_ADMIN_EMAIL and _PASSWORD), as Keycloak's bootstrap admin:
 * registered at start while no user has the email, with the `admin` role, by the system. Once the address is
 * taken nothing is changed, so a password the admin has since changed is never put back, and several api
 * processes starting at once register it once (the email's reservation decides).
 */
export async function bootstrapAdmin(ports: Pick<AdminPorts, 'commands' | 'config'>): Promise<User | null> {
  const wanted = ports.config.admin.bootstrap;
  if (!wanted) return null;
  const userId = generateId();
  try {
    const registered = await registerUser(ports, systemRequest, {
      via: 'admin.bootstrap',
      actor: { id: userId, kind: 'system' },
      registration: {
        userId,
        email: wanted.email,
        name: 'Admin',
        image: null,
        emailVerified: true,
        passwordHash: await hashPassword(wanted.password, ports.config.password.argon2),
        refusal: 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL',
      },
      username: initialUsernameFields({}),
      alsoOnUser: (id) => decideCreatedUserRights({ userId: id, role: 'admin', ban: null }),
      verificationMail: null,
      session: null,
      whenTaken: 'refuse',
    });
    return registered.registered ? registered.user : null;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL') return null;
    throw error;
  }
}
