import { CredentialAccountCreated, DomainError, EmailReserved, UserRegistered, type DomainEvent } from '@portcullis/contracts';
import type { EmailReservationState } from '@portcullis/contracts';

export interface RegisterWithPassword {
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
  readonly name: string;
  readonly image: string | null;
  readonly passwordHash: string;
}

export interface RegistrationEvents {
  readonly reservation: DomainEvent[];
  readonly user: DomainEvent[];
}

/** Email and password checks happen before (they need configuration and hashing); this decides the facts. The session a sign-up opens is the session area's (see `openSession`). */
export function decideRegistration(command: RegisterWithPassword, reservation: EmailReservationState): RegistrationEvents {
  if (reservation.status === 'reserved') throw new DomainError('USER_ALREADY_EXISTS');
  return {
    reservation: [EmailReserved({ email: command.email, userId: command.userId })],
    user: [
      UserRegistered({
        userId: command.userId,
        email: command.email,
        name: command.name,
        image: command.image,
        emailVerified: false,
      }),
      CredentialAccountCreated({ userId: command.userId, accountId: command.accountId, passwordHash: command.passwordHash }),
    ],
  };
}
