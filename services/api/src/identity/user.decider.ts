import { DomainError, type DomainEvent, normalizeUsername, streamModel, UsernameChanged, UserUpdated } from '@portcullis/contracts';

export type UserState =
  | { status: 'none' }
  | {
      status: 'registered';
      userId: string;
      email: string;
      name: string;
      image: string | null;
      /** Lower-cased; the user holds its `username-<username>` reservation. */
      username: string | null;
      displayUsername: string | null;
    };

export const initialUserState = (): UserState => ({ status: 'none' });

export function evolveUser(state: UserState, event: DomainEvent): UserState {
  switch (event.type) {
    case 'user.registered.v1':
      return {
        status: 'registered',
        userId: event.data.userId,
        email: event.data.email,
        name: event.data.name,
        image: event.data.image,
        username: null,
        displayUsername: null,
      };
    case 'user.updated.v1':
      if (state.status !== 'registered') return state;
      return {
        ...state,
        ...(event.data.name !== undefined ? { name: event.data.name } : {}),
        ...(event.data.image !== undefined ? { image: event.data.image } : {}),
      };
    // The email lifecycle (account/): the update paths must see a changed email, and a deleted user is no user.
    case 'user.email_changed.v1':
      return state.status === 'registered' ? { ...state, email: event.data.email } : state;
    case 'user.deleted.v1':
      return { status: 'none' };
    case 'user.username_changed.v1':
      return state.status === 'registered'
        ? { ...state, username: event.data.username, displayUsername: event.data.displayUsername }
        : state;
    default:
      return state;
  }
}

export interface UpdateUser {
  readonly name?: string;
  readonly image?: string | null;
  /** As typed, already checked against the username rules; its reservation is decided beside this. */
  readonly username?: string;
  readonly displayUsername?: string;
}

export function decideUpdateUser(command: UpdateUser, state: UserState): DomainEvent[] {
  if (state.status !== 'registered') throw new DomainError('USER_NOT_FOUND');
  const profile = command.name !== undefined || command.image !== undefined;
  const usernames = command.username !== undefined || command.displayUsername !== undefined;
  if (!profile && !usernames) throw new DomainError('NO_FIELDS_TO_UPDATE');
  const events: DomainEvent[] = [];
  if (profile) {
    events.push(
      UserUpdated({
        userId: state.userId,
        ...(command.name !== undefined ? { name: command.name } : {}),
        ...(command.image !== undefined ? { image: command.image } : {}),
      }),
    );
  }
  if (usernames) {
    // better-auth's username plugin: a new username leaves the display username as it was; a user that has
    // none yet gets the username as typed (spec section 5: no display username given means the username).
    const username = command.username !== undefined ? normalizeUsername(command.username) : state.username;
    const displayUsername = command.displayUsername || state.displayUsername || command.username || null;
    if (username !== state.username || displayUsername !== state.displayUsername) {
      events.push(UsernameChanged({ userId: state.userId, username, displayUsername }));
    }
  }
  return events;
}

/** The user stream `user-<userId>` as profile changes decide on it. */
export const userModel = streamModel('user-profile', 2, initialUserState, evolveUser);
