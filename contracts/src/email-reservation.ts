import type { DomainEvent } from './events/index.ts';
import { streamModel } from './events/stream-model.ts';

/**
 * The email reservation stream: reserved by a user, or free. Here, not beside the api's deciders, because
 * the erasure (platform) asks it too: whether an address a deleted user left is someone else's now.
 */
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
