import { evolveUserAnswer, type DomainEvent, type EventTime, type StreamModel, type User } from '@portcullis/contracts';
import { accountModel, type AccountState } from './account.decider.ts';
import type { PasswordChange } from './sign-in-guard.decider.ts';

/**
 * The user stream as a password sign-in decides on it: the account with the time of its latest password
 * change, which lifts a lock set before it, and the user as the sign-in answer shows it (folded as the
 * session cache folds it, from the same stream).
 */
export interface SignInAccount {
  readonly account: AccountState;
  readonly passwordChange: PasswordChange | null;
  readonly user: User | null;
}

export const initialSignInAccount = (): SignInAccount => ({ account: accountModel.initial(), passwordChange: null, user: null });

export function evolveSignInAccount(state: SignInAccount, event: DomainEvent, time: EventTime): SignInAccount {
  const account = accountModel.evolve(state.account, event, time);
  const user = evolveUserAnswer(state.user, event, time.occurredAt);
  const passwordChange = event.type === 'user.password_changed.v1' ? { at: time.occurredAt, via: event.data.via } : state.passwordChange;
  return { account, passwordChange, user };
}

/** Revision 3: the account's fold reads `user.password_rehashed.v1` (see `accountModel`). */
export const signInAccountModel: StreamModel<SignInAccount> = {
  name: 'sign-in-account',
  revision: 3,
  initial: initialSignInAccount,
  evolve: evolveSignInAccount,
};
