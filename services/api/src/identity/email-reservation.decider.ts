import { streamModel, type DomainEvent } from '@portcullis/contracts';

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

/** An email's reservation stream `email-<email>`. */
export const emailReservationModel = streamModel('email-reservation', 1, initialEmailReservation, evolveEmailReservation);
