import { CredentialAccountCreated, DomainError, EmailReserved, UserRegistered, type DomainEvent } from '@portcullis/contracts';
import { streamModel } from '@portcullis/contracts';
import { sessionOpeningEvents, type NewSession } from '../session/session-lifecycle.ts';

/** The email reservation stream: reserved by a user, or free. */
export type EmailReservationState = { status: 'free' } | { status: 'reserved'; userId: string };

export const initialEmailReservation = (): EmailReservationState => ({ status: 'free' });

export function evolveEmailReservation(state: EmailReservationState, event: DomainEvent): EmailReservationState {
  switch (event.type) {
    case 'email.reserved.v1':
      return { status: 'reserved', userId: event.data.userId };
    case 'email.released.v1':
      return { status: 'free' };
    default:
      return state;
  }
}

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

/** An email's reservation stream `email-<email>`. */
export const emailReservationModel = streamModel('email-reservation', 1, initialEmailReservation, evolveEmailReservation);
