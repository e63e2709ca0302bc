import { DomainError, type DomainEvent, normalizeUsername, streamModel, UsernameChanged, UsernameReleased, UsernameReserved } from '@portcullis/contracts';

/** The username reservation stream: held by a user, or free (never taken, or released). */
export type UsernameReservationState = { status: 'free' } | { status: 'reserved'; userId: string };

export const initialUsernameReservation = (): UsernameReservationState => ({ status: 'free' });

export function evolveUsernameReservation(state: UsernameReservationState, event: DomainEvent): UsernameReservationState {
  switch (event.type) {
    case 'username.reserved.v1':
      return { status: 'reserved', userId: event.data.userId };
    case 'username.released.v1':
      return state.status === 'reserved' && state.userId === event.data.userId ? { status: 'free' } : state;
    default:
      return state;
  }
}

export interface ClaimUsername {
  readonly userId: string;
  /** As typed and already checked against the rules; stored lower-cased. */
  readonly username: string;
}

/**
 * Reserves a username for a user. Holding it already is no change; anyone else holding it is a refusal.
 * The reservation is appended expecting the version this was decided on, so of two racing claims one fails.
 */
export function decideUsernameClaim(command: ClaimUsername, state: UsernameReservationState): DomainEvent[] {
  const username = normalizeUsername(command.username);
  if (state.status === 'reserved') {
    if (state.userId === command.userId) return [];
    throw new DomainError('USERNAME_IS_ALREADY_TAKEN');
  }
  return [UsernameReserved({ username, userId: command.userId })];
}

export interface ReleaseUsername {
  readonly userId: string;
  readonly username: string;
}

/** Frees a username its holder moves away from; a stream the user does not hold is left alone. */
export function decideUsernameRelease(command: ReleaseUsername, state: UsernameReservationState): DomainEvent[] {
  if (state.status !== 'reserved' || state.userId !== command.userId) return [];
  return [UsernameReleased({ username: normalizeUsername(command.username), userId: command.userId })];
}

export interface UsernameFields {
  readonly username: string | null;
  readonly displayUsername: string | null;
}

/**
 * The username fields a new user starts with (better-auth's sign-up hooks): a display username given
 * without a username becomes the username when it is a valid one (the route checks that), and a username
 * without a display username gives the display username as typed.
 */
export function initialUsernameFields(input: { username?: string | undefined; displayUsername?: string | undefined }): UsernameFields {
  // An empty display username is no display username, as in better-auth's hooks.
  const displayUsername = input.displayUsername || null;
  if (input.username === undefined) return { username: null, displayUsername };
  return { username: normalizeUsername(input.username), displayUsername: displayUsername ?? input.username };
}

/** The user-stream fact for a user's username fields, or nothing when there are none. */
export function usernameFieldsChanged(userId: string, fields: UsernameFields): DomainEvent[] {
  if (fields.username === null && fields.displayUsername === null) return [];
  return [UsernameChanged({ userId, username: fields.username, displayUsername: fields.displayUsername })];
}

/** A username's reservation stream `username-<username>`. */
export const usernameReservationModel = streamModel('username-reservation', 1, initialUsernameReservation, evolveUsernameReservation);
