import { DomainError, UserUpdated, type DomainEvent } from '@portcullis/contracts';

export type UserState =
  | { status: 'none' }
  | {
      status: 'registered';
      userId: string;
      email: string;
      name: string;
      image: string | null;
      credential: { accountId: string; passwordHash: string } | null;
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
        credential: null,
      };
    case 'user.credential_account_created.v1':
      return state.status === 'registered'
        ? { ...state, credential: { accountId: event.data.accountId, passwordHash: event.data.passwordHash } }
        : state;
    case 'user.updated.v1':
      if (state.status !== 'registered') return state;
      return {
        ...state,
        ...(event.data.name !== undefined ? { name: event.data.name } : {}),
        ...(event.data.image !== undefined ? { image: event.data.image } : {}),
      };
    // The email lifecycle (account/): the sign-in and update paths must see a changed password or email,
    // and a deleted user is no user.
    case 'user.password_changed.v1':
      return state.status === 'registered' && state.credential
        ? { ...state, credential: { accountId: state.credential.accountId, passwordHash: event.data.passwordHash } }
        : state;
    case 'user.email_changed.v1':
      return state.status === 'registered' ? { ...state, email: event.data.email } : state;
    case 'user.deleted.v1':
      return { status: 'none' };
    default:
      return state;
  }
}

export interface UpdateUser {
  readonly name?: string;
  readonly image?: string | null;
}

export function decideUpdateUser(command: UpdateUser, state: UserState): DomainEvent[] {
  if (state.status !== 'registered') throw new DomainError('USER_NOT_FOUND');
  if (command.name === undefined && command.image === undefined) throw new DomainError('NO_FIELDS_TO_UPDATE');
  return [
    UserUpdated({
      userId: state.userId,
      ...(command.name !== undefined ? { name: command.name } : {}),
      ...(command.image !== undefined ? { image: command.image } : {}),
    }),
  ];
}
