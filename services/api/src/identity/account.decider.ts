import {
  AccountUnlinked,
  CredentialAccountCreated,
  DomainError,
  EmailChanged,
  EmailReleased,
  EmailReserved,
  EmailVerified,
  PasswordChanged,
  PasswordRehashed,
  UserDeleted,
  UserUnbanned,
  type DomainEvent,
  type EventData,
} from '@portcullis/contracts';
import { streamModel } from '@portcullis/contracts';
import type { EmailReservationState } from '@portcullis/contracts';

/**
 * One way the user signs in: the password account (`credential`, whose provider account id is the user's
 * own id, as better-auth keeps it) or a social provider's. The provider's tokens are not here: this state is
 * cached and snapshotted, and tokens are read only where they are handed out (`provider-tokens.state.ts`).
 */
export interface HeldAccount {
  readonly accountId: string;
  readonly providerId: string;
  readonly providerAccountId: string;
  /** The password account's hash: argon2id, or a better-auth scrypt hash until its next sign-in; null for others. */
  readonly passwordHash: string | null;
  /** Granted scopes, comma-separated; null for the password account. */
  readonly scope: string | null;
}

export const CREDENTIAL_PROVIDER = 'credential';

/**
 * The account as the email lifecycle decides on it: the user stream folded with its email, whether that is
 * verified, and the accounts it signs in with. Time, ids and password hashes arrive in the commands.
 */
export type AccountState =
  | { status: 'none' }
  | {
      status: 'active';
      userId: string;
      email: string;
      name: string;
      emailVerified: boolean;
      accounts: readonly HeldAccount[];
      /** The admin plugin's ban: no session opens for the user until it expires (null: until lifted). */
      ban: { expiresAt: string | null } | null;
    }
  | { status: 'deleted'; userId: string };

export type ActiveAccount = Extract<AccountState, { status: 'active' }>;

export const initialAccountState = (): AccountState => ({ status: 'none' });

/** The password account, if the user has one. */
export function credentialOf(account: ActiveAccount): (HeldAccount & { readonly passwordHash: string }) | null {
  const credential = account.accounts.find((held) => held.providerId === CREDENTIAL_PROVIDER);
  return credential?.passwordHash ? (credential as HeldAccount & { passwordHash: string }) : null;
}

function withAccounts(state: AccountState, change: (accounts: readonly HeldAccount[]) => readonly HeldAccount[]): AccountState {
  return state.status === 'active' ? { ...state, accounts: change(state.accounts) } : state;
}

export function evolveAccount(state: AccountState, event: DomainEvent): AccountState {
  switch (event.type) {
    case 'user.registered.v1':
      return {
        status: 'active',
        userId: event.data.userId,
        email: event.data.email,
        name: event.data.name,
        emailVerified: event.data.emailVerified,
        accounts: [],
        ban: null,
      };
    case 'user.credential_account_created.v2': {
      const { accountId, userId, passwordHash } = event.data;
      return withAccounts(state, (accounts) => [...accounts, { accountId, providerId: CREDENTIAL_PROVIDER, providerAccountId: userId, passwordHash, scope: null }]);
    }
    case 'user.provider_account_linked.v1': {
      const { accountId, providerId, providerAccountId, scope } = event.data;
      return withAccounts(state, (accounts) => [...accounts, { accountId, providerId, providerAccountId, passwordHash: null, scope }]);
    }
    case 'user.provider_tokens_updated.v1': {
      const { accountId, scope } = event.data;
      if (scope === undefined) return state;
      return withAccounts(state, (accounts) => accounts.map((held) => (held.accountId === accountId ? { ...held, scope } : held)));
    }
    case 'user.account_unlinked.v1':
      return withAccounts(state, (accounts) => accounts.filter((held) => held.accountId !== event.data.accountId));
    case 'user.updated.v1':
      return state.status === 'active' && event.data.name !== undefined ? { ...state, name: event.data.name } : state;
    case 'user.email_verified.v1':
      return state.status === 'active' && state.email === event.data.email ? { ...state, emailVerified: true } : state;
    case 'user.email_changed.v1':
      return state.status === 'active' ? { ...state, email: event.data.email, emailVerified: event.data.emailVerified } : state;
    case 'user.password_changed.v1':
    case 'user.password_rehashed.v1':
      return withAccounts(state, (accounts) =>
        accounts.map((held) => (held.accountId === event.data.accountId ? { ...held, passwordHash: event.data.passwordHash } : held)),
      );
    case 'user.banned.v1':
      return state.status === 'active' ? { ...state, ban: { expiresAt: event.data.expiresAt } } : state;
    case 'user.unbanned.v1':
      return state.status === 'active' ? { ...state, ban: null } : state;
    case 'user.deleted.v1':
      return { status: 'deleted', userId: event.data.userId };
    default:
      return state;
  }
}

export type AccountCommand =
  | { readonly type: 'verify-email'; readonly email: string }
  | { readonly type: 'change-password'; readonly passwordHash: string }
  /**
   * A sign-in proved the password against `replacing`, which is not how hashes are made now: `passwordHash`
   * (of the same password) replaces it, unless the hash changed meanwhile.
   */
  | {
      readonly type: 'rehash-password';
      readonly replacing: string;
      readonly passwordHash: string;
      readonly previous: EventData<'user.password_rehashed.v1'>['previous'];
      readonly cost: EventData<'user.password_rehashed.v1'>['cost'];
    }
  /** A reset gives a user without a password account one (better-auth's resetCredentialPassword). */
  | { readonly type: 'reset-password'; readonly passwordHash: string; readonly newAccountId: string }
  | { readonly type: 'set-password'; readonly passwordHash: string; readonly newAccountId: string }
  | { readonly type: 'change-email'; readonly newEmail: string; readonly verified: boolean }
  /**
   * unlink-account, never the last account. better-auth 1.7 names the account by its row id (`accountId`);
   * the spec's older clients by `providerId` and, optionally, the provider's account id: both are understood.
   */
  | { readonly type: 'unlink'; readonly providerId: string | undefined; readonly accountId: string | undefined }
  | { readonly type: 'delete' };

function active(state: AccountState): ActiveAccount {
  if (state.status !== 'active') throw new DomainError('USER_NOT_FOUND');
  return state;
}

export function decideAccount(command: AccountCommand, state: AccountState): DomainEvent[] {
  switch (command.type) {
    case 'verify-email': {
      const account = active(state);
      // A link for an address the user no longer has proves nothing about the current one.
      if (account.email !== command.email) throw new DomainError('INVALID_TOKEN');
      if (account.emailVerified) return [];
      return [EmailVerified({ userId: account.userId, email: account.email })];
    }
    case 'change-password': {
      const account = active(state);
      const credential = credentialOf(account);
      if (!credential) throw new DomainError('CREDENTIAL_ACCOUNT_NOT_FOUND');
      return [
        PasswordChanged({
          userId: account.userId,
          accountId: credential.accountId,
          passwordHash: command.passwordHash,
          via: 'change-password',
        }),
      ];
    }
    case 'rehash-password': {
      const account = active(state);
      const credential = credentialOf(account);
      // Proved against a hash the account no longer holds: the new one is not this rehash's to replace.
      if (!credential || credential.passwordHash !== command.replacing) return [];
      const { passwordHash, previous, cost } = command;
      return [PasswordRehashed({ userId: account.userId, accountId: credential.accountId, passwordHash, previous, cost })];
    }
    case 'reset-password': {
      const account = active(state);
      const credential = credentialOf(account);
      if (!credential) {
        return [CredentialAccountCreated({ userId: account.userId, accountId: command.newAccountId, passwordHash: command.passwordHash })];
      }
      return [
        PasswordChanged({
          userId: account.userId,
          accountId: credential.accountId,
          passwordHash: command.passwordHash,
          via: 'reset-password',
        }),
      ];
    }
    case 'set-password': {
      const account = active(state);
      if (credentialOf(account)) throw new DomainError('PASSWORD_ALREADY_SET');
      return [CredentialAccountCreated({ userId: account.userId, accountId: command.newAccountId, passwordHash: command.passwordHash })];
    }
    case 'change-email': {
      const account = active(state);
      if (account.email === command.newEmail) throw new DomainError('EMAIL_IS_THE_SAME');
      return [
        EmailChanged({ userId: account.userId, previousEmail: account.email, email: command.newEmail, emailVerified: command.verified }),
      ];
    }
    case 'unlink': {
      const account = active(state);
      // better-auth refuses the last account before it looks for the one named (a user with none: not found).
      if (account.accounts.length === 1) throw new DomainError('FAILED_TO_UNLINK_LAST_ACCOUNT');
      const { providerId, accountId } = command;
      const held = account.accounts.find((candidate) =>
        providerId === undefined
          ? candidate.accountId === accountId
          : candidate.providerId === providerId && (accountId === undefined || accountId === candidate.providerAccountId || accountId === candidate.accountId),
      );
      if (!held) throw new DomainError('ACCOUNT_NOT_FOUND');
      return [AccountUnlinked({ userId: account.userId, accountId: held.accountId, providerId: held.providerId })];
    }
    case 'delete': {
      const account = active(state);
      return [UserDeleted({ userId: account.userId, email: account.email })];
    }
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
}

export type SignInBan =
  /** Banned: no session opens (better-auth refuses in its session-create hook, after the password check). */
  | { readonly outcome: 'banned' }
  /** Free to sign in; a ban found expired is lifted in the sign-in's own append, as better-auth clears it. */
  | { readonly outcome: 'free'; readonly events: DomainEvent[] };

/** Every way of opening a session for the user asks this first, with the time it decides at. */
export function decideSignInBan(account: ActiveAccount, now: Date): SignInBan {
  const ban = account.ban;
  if (ban === null) return { outcome: 'free', events: [] };
  if (ban.expiresAt !== null && Date.parse(ban.expiresAt) < now.getTime()) {
    return { outcome: 'free', events: [UserUnbanned({ userId: account.userId, reason: 'expired' })] };
  }
  return { outcome: 'banned' };
}

export interface EmailMove {
  /** Events for the old address's reservation stream. */
  readonly released: DomainEvent[];
  /** Events for the new address's reservation stream. */
  readonly reserved: DomainEvent[];
}

/** Moving a user to another address: the old one is freed, the new one must be free and is reserved. */
export function decideEmailMove(
  command: { userId: string; from: string; to: string },
  from: EmailReservationState,
  to: EmailReservationState,
): EmailMove {
  if (to.status === 'reserved') throw new DomainError('COULDNT_UPDATE_YOUR_EMAIL');
  return {
    released: from.status === 'reserved' && from.userId === command.userId ? [EmailReleased({ email: command.from, userId: command.userId })] : [],
    reserved: [EmailReserved({ email: command.to, userId: command.userId })],
  };
}

/** Deleting a user frees its address for a new sign-up. */
export function decideEmailRelease(command: { userId: string; email: string }, reservation: EmailReservationState): DomainEvent[] {
  return reservation.status === 'reserved' && reservation.userId === command.userId
    ? [EmailReleased({ email: command.email, userId: command.userId })]
    : [];
}

/** The user stream `user-<userId>` as the account's commands fold it. */
/** Revision 3: folds `user.password_rehashed.v1`, which a snapshot of an older build may have passed over. */
export const accountModel = streamModel('account', 3, initialAccountState, evolveAccount);
