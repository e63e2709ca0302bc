import { CredentialAccountCreated, DomainError, EmailReserved, UserRegistered, type DomainEvent } from '@portcullis/contracts';
import type { EmailReservationState } from '../identity/email-reservation.decider.ts';
import { sessionOpeningEvents, type NewSession } from '../session/session-lifecycle.ts';

export interface RegisterWithPassword {
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
  readonly name: string;
  readonly image: string | null;
  readonly passwordHash: string;
  readonly session: NewSession | null;
}

export interface RegistrationEvents {
  readonly reservation: DomainEvent[];
  readonly user: DomainEvent[];
  /** For the new session's stream and the user's session index, when sign-up opens one. */
  readonly session: ReturnType<typeof sessionOpeningEvents> | null;
}

/** Email, password and session checks happen before (they need configuration and hashing); this decides the facts. */
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
    session: command.session ? sessionOpeningEvents(command.userId, command.session, 'sign-up') : null,
  };
}
