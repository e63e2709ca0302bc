import { ERASED, type EventData } from '@portcullis/contracts';
import type { ProjectedEvent } from '@portcullis/platform';
import { instant, PendingRows } from '../pending-rows.ts';

/*
 * The identity projection's batch in memory: the rows a replay's batch creates, changed there by the
 * batch's later events, then written in a few statements (see `PendingRows`); `identity.projection.ts`
 * applies whatever is not held here one statement at a time.
 */

type UserRow = {
  id: string;
  name: string;
  email: string;
  emailVerified: boolean;
  image: string | null;
  createdAt: string;
  updatedAt: string;
  username: string | null;
  displayUsername: string | null;
  role: string;
  banned: boolean;
  banReason: string | null;
  banExpires: string | null;
};
export type AccountRow = {
  id: string;
  accountId: string;
  providerId: string;
  userId: string;
  password: string | null;
  accessTokenExpiresAt: string | null;
  refreshTokenExpiresAt: string | null;
  scope: string | null;
  createdAt: string;
  updatedAt: string;
};
type VerificationRow = { id: string; identifier: string; value: string; expiresAt: string; createdAt: string; updatedAt: string };

/** A batch's new rows, with the defaults the tables give the columns the creating events do not set. */
export function pendingTables() {
  return {
    users: new PendingRows<UserRow>('user', 'id', {
      id: 'text',
      name: 'text',
      email: 'text',
      emailVerified: 'bool',
      image: 'text',
      createdAt: 'timestamptz',
      updatedAt: 'timestamptz',
      username: 'text',
      displayUsername: 'text',
      role: 'text',
      banned: 'bool',
      banReason: 'text',
      banExpires: 'timestamptz',
    }),
    accounts: new PendingRows<AccountRow>('account', 'id', {
      id: 'text',
      accountId: 'text',
      providerId: 'text',
      userId: 'text',
      password: 'text',
      accessTokenExpiresAt: 'timestamptz',
      refreshTokenExpiresAt: 'timestamptz',
      scope: 'text',
      createdAt: 'timestamptz',
      updatedAt: 'timestamptz',
    }),
    verifications: new PendingRows<VerificationRow>('verification', 'id', {
      id: 'text',
      identifier: 'text',
      value: 'text',
      expiresAt: 'timestamptz',
      createdAt: 'timestamptz',
      updatedAt: 'timestamptz',
    }),
  };
}
export type Pending = ReturnType<typeof pendingTables>;

/**
 * A provider flow under way as better-auth keeps it, a verification value: known by its state's hash, its
 * value the flow's non-secret part (no email: a link flow names its user by id, as other verifications do).
 */
export function socialFlowRow(flow: EventData<'social.flow_started.v1'>) {
  const { stateHash, linkEmail: _linkEmail, expiresAt, ...value } = flow;
  return { id: stateHash, identifier: `social-flow:${stateHash}`, value: JSON.stringify(value), expiresAt: instant(expiresAt) };
}

/** better-auth's identifiers, with the token's hash where better-auth keeps the token. */
export function verificationIdentifier(purpose: string, tokenHash: string): string {
  return purpose === 'reset-password' ? `reset-password:${tokenHash}` : `delete-account-${tokenHash}`;
}

/**
 * The event applied to this batch's new rows, in memory, as `apply` would change them: true when it was
 * (its rows are all among them). A row it changes that was written before stays for `apply`.
 */
/**
 * The account row an account's first event makes: better-auth's credential account (its accountId the user
 * id, providerId "credential") or a provider's (its tokens stay on the log; the row keeps their expiries).
 * Null for a link whose user was erased further on.
 */
export function newAccountRow(
  event: Extract<ProjectedEvent['event'], { type: 'user.credential_account_created.v2' | 'user.provider_account_linked.v1' }>,
  at: string,
): AccountRow | null {
  if (event.type === 'user.credential_account_created.v2') {
    const c = event.data;
    return { id: c.accountId, accountId: c.userId, providerId: 'credential', userId: c.userId, password: c.passwordHash, accessTokenExpiresAt: null, refreshTokenExpiresAt: null, scope: null, createdAt: at, updatedAt: at };
  }
  const p = event.data;
  if (p.providerAccountId === ERASED) return null;
  return {
    id: p.accountId,
    accountId: p.providerAccountId,
    providerId: p.providerId,
    userId: p.userId,
    password: null,
    accessTokenExpiresAt: p.accessTokenExpiresAt === null ? null : instant(p.accessTokenExpiresAt),
    refreshTokenExpiresAt: p.refreshTokenExpiresAt === null ? null : instant(p.refreshTokenExpiresAt),
    scope: p.scope,
    createdAt: at,
    updatedAt: at,
  };
}

export function heldInMemory(pending: Pending, { event, recorded }: ProjectedEvent): boolean {
  const at = instant(recorded.metadata.occurredAt);
  const userId = 'userId' in event.data ? event.data.userId : null;
  const user = typeof userId === 'string' ? pending.users.get(userId) : undefined;
  switch (event.type) {
    case 'user.registered.v1': {
      const u = event.data;
      // See `apply`: an erased registration has no row.
      if (u.email === ERASED) return true;
      return pending.users.add({
        id: u.userId,
        name: u.name,
        email: u.email,
        emailVerified: u.emailVerified,
        image: u.image,
        createdAt: at,
        updatedAt: at,
        username: null,
        displayUsername: null,
        role: 'user',
        banned: false,
        banReason: null,
        banExpires: null,
      });
    }
    case 'user.credential_account_created.v2':
    case 'user.provider_account_linked.v1': {
      const row = newAccountRow(event, at);
      // An erased link (its user deleted further on) has no row, as an erased registration has none.
      return row === null ? true : pending.accounts.add(row);
    }
    case 'verification.token_issued.v1': {
      const v = event.data;
      return pending.verifications.add({
        id: v.tokenHash,
        identifier: verificationIdentifier(v.purpose, v.tokenHash),
        value: v.userId,
        expiresAt: instant(v.expiresAt),
        createdAt: at,
        updatedAt: at,
      });
    }
    case 'social.flow_started.v1':
      return pending.verifications.add({ ...socialFlowRow(event.data), createdAt: at, updatedAt: at });
    case 'verification.token_consumed.v1':
    case 'verification.token_revoked.v1':
      return pending.verifications.delete(event.data.tokenHash);
    case 'social.flow_finished.v1':
      return pending.verifications.get(event.data.stateHash) ? pending.verifications.delete(event.data.stateHash) : false;
    case 'user.password_changed.v1':
    case 'user.password_rehashed.v1': {
      const account = pending.accounts.get(event.data.accountId);
      if (!account) return false;
      account.password = event.data.passwordHash;
      account.updatedAt = at;
      return true;
    }
    case 'user.provider_tokens_updated.v1': {
      const account = pending.accounts.get(event.data.accountId);
      if (!account) return false;
      const t = event.data;
      account.accessTokenExpiresAt = t.accessTokenExpiresAt === null ? null : instant(t.accessTokenExpiresAt);
      account.refreshTokenExpiresAt = t.refreshTokenExpiresAt === null ? null : instant(t.refreshTokenExpiresAt);
      if (t.scope !== undefined) account.scope = t.scope;
      account.updatedAt = at;
      return true;
    }
    case 'user.account_unlinked.v1':
      return pending.accounts.get(event.data.accountId) ? pending.accounts.delete(event.data.accountId) : false;
    default:
      break;
  }
  if (!user) return false;
  switch (event.type) {
    case 'user.updated.v1':
      if (event.data.name !== undefined) user.name = event.data.name;
      if (event.data.image !== undefined) user.image = event.data.image ?? null;
      user.updatedAt = at;
      return true;
    case 'user.username_changed.v1':
      user.username = event.data.username;
      user.displayUsername = event.data.displayUsername;
      user.updatedAt = at;
      return true;
    case 'user.email_verified.v1':
      if (user.email === event.data.email) {
        user.emailVerified = true;
        user.updatedAt = at;
      }
      return true;
    case 'user.email_changed.v1':
      if (event.data.email === ERASED) return true;
      user.email = event.data.email;
      user.emailVerified = event.data.emailVerified;
      user.updatedAt = at;
      return true;
    case 'user.role_changed.v1':
      user.role = event.data.role;
      user.updatedAt = at;
      return true;
    case 'user.banned.v1':
      user.banned = true;
      user.banReason = event.data.reason;
      user.banExpires = event.data.expiresAt === null ? null : instant(event.data.expiresAt);
      user.updatedAt = at;
      return true;
    case 'user.unbanned.v1':
      user.banned = false;
      user.banReason = null;
      user.banExpires = null;
      user.updatedAt = at;
      return true;
    default:
      return false;
  }
}
