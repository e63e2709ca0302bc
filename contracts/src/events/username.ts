import { z } from 'zod';
import { defineEvent } from './define-event.ts';

/**
 * Stream `username-<lower-cased username>`: the reservation that makes username uniqueness atomic, as
 * `email-<email>` does for emails. A reservation is appended in the same atomic write as the user's events,
 * expecting the version the decision was made on; a change of username releases the old one in that write.
 */
export const UsernameReserved = defineEvent('username.reserved.v1', z.object({ username: z.string(), userId: z.string() }));

export const UsernameReleased = defineEvent('username.released.v1', z.object({ username: z.string(), userId: z.string() }));

/**
 * Stream `user-<userId>`: the user's username (lower-cased) and display username after the change, both
 * whole values (null when unset), so a reader needs no earlier event to know them.
 */
export const UsernameChanged = defineEvent(
  'user.username_changed.v1',
  z.object({
    userId: z.string(),
    username: z.string().nullable(),
    displayUsername: z.string().nullable(),
  }),
);
