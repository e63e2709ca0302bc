import { CredentialAccountCreated, DomainError, EmailReserved, UserRegistered, type DomainEvent, type EmailReservationState } from '@portcullis/contracts';

/**
 * A new user: what sign-up and an admin's create-user both decide, after the checks that need configuration
 * and hashing (the email's form, the password's length, its hash).
 */
export interface Registration {
  readonly userId: string;
  /** Lower-cased and checked already. */
  readonly email: string;
  readonly name: string;
  readonly image: string | null;
  readonly emailVerified: boolean;
  /** Null: no password account (a user who signs in some other way). */
  readonly credential: { readonly accountId: string; readonly passwordHash: string } | null;
  /** better-auth's answer for an address that is taken: the sign-up's, or the admin plugin's. */
  readonly refusal: 'USER_ALREADY_EXISTS' | 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL';
}

export interface RegistrationEvents {
  readonly reservation: DomainEvent[];
  readonly user: DomainEvent[];
}

/** The address reserved (refused when taken) and the user registered, with their password account if any. */
export function decideRegistration(command: Registration, reservation: EmailReservationState): RegistrationEvents {
  if (reservation.status === 'reserved') throw new DomainError(command.refusal);
  const { userId } = command;
  return {
    reservation: [EmailReserved({ email: command.email, userId })],
    user: [
      UserRegistered({ userId, email: command.email, name: command.name, image: command.image, emailVerified: command.emailVerified }),
      ...(command.credential ? [CredentialAccountCreated({ userId, ...command.credential })] : []),
    ],
  };
}
