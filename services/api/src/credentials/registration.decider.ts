import {
  CredentialAccountCreated,
  DomainError,
  EmailReserved,
  SessionCreated,
  UserRegistered,
  type DomainEvent,
} from '@portcullis/contracts';

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

export interface NewSession {
  readonly sessionId: string;
  readonly tokenHash: string;
  readonly expiresAt: Date;
  readonly ipAddress: string | null;
  readonly userAgent: string | null;
  readonly rememberMe: boolean;
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
  readonly session: DomainEvent[];
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
    session: command.session ? [sessionCreated(command.userId, command.session, 'sign-up')] : [],
  };
}

export function sessionCreated(
  userId: string,
  session: NewSession,
  method: 'sign-up' | 'email-password' | 'email-verification' | 'username-password',
): DomainEvent {
  return SessionCreated({
    sessionId: session.sessionId,
    userId,
    tokenHash: session.tokenHash,
    expiresAt: session.expiresAt.toISOString(),
    ipAddress: session.ipAddress,
    userAgent: session.userAgent,
    rememberMe: session.rememberMe,
    method,
  });
}
