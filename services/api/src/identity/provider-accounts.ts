import { ProviderAccountLinked, streams, type DomainEvent, type EventData } from '@portcullis/contracts';
import { generateId, type UnitOfWork } from '@portcullis/platform';
import { CREDENTIAL_PROVIDER, type HeldAccount } from './account.decider.ts';
import { decideProviderAccountClaim, decideProviderAccountRelease, providerAccountClaimModel } from './provider-account.decider.ts';

/** Frees the provider accounts among `accounts` (the password account has no claim), within the command. */
export async function releaseProviderAccounts(unit: UnitOfWork, userId: string, accounts: readonly HeldAccount[]): Promise<void> {
  const providers = accounts.filter((held) => held.providerId !== CREDENTIAL_PROVIDER);
  if (providers.length === 0) return;
  const claims = await unit.loadAll(providers.map((held) => [streams.providerAccount(held.providerId, held.providerAccountId), providerAccountClaimModel] as const));
  providers.forEach((held, index) => {
    const claim = claims[index]!;
    unit.append(claim.streamId, decideProviderAccountRelease({ providerId: held.providerId, providerAccountId: held.providerAccountId, userId }, claim.state));
  });
}

/** A provider's account about to join a user, with what the provider answered. */
export interface NewProviderAccount {
  readonly providerId: string;
  readonly providerAccountId: string;
  /** Comma-separated, as better-auth keeps them. */
  readonly scope: string | null;
  readonly tokens: ProviderTokenValues;
}

export type ProviderTokenValues = Pick<
  EventData<'user.provider_account_linked.v1'>,
  'accessToken' | 'refreshToken' | 'idToken' | 'accessTokenExpiresAt' | 'refreshTokenExpiresAt'
>;

export type ProviderAccountLink =
  | { readonly outcome: 'linked'; readonly accountId: string; readonly userEvents: DomainEvent[] }
  /** The user holds it already. */
  | { readonly outcome: 'held'; readonly accountId: string }
  | { readonly outcome: 'taken' };

/**
 * Joins a provider's account to the user within the command: its claim appended here, so a second user
 * racing for it fails on the claim's version and is decided again; the link event is the caller's to append
 * on the user's stream, beside whatever else it decides there.
 */
export async function linkProviderAccountIn(unit: UnitOfWork, userId: string, account: NewProviderAccount): Promise<ProviderAccountLink> {
  const claim = await unit.load(streams.providerAccount(account.providerId, account.providerAccountId), providerAccountClaimModel);
  const accountId = generateId();
  const decision = decideProviderAccountClaim({ providerId: account.providerId, providerAccountId: account.providerAccountId, userId, accountId }, claim.state);
  if (decision.outcome !== 'claimed') return decision;
  unit.append(claim.streamId, decision.events);
  return {
    outcome: 'linked',
    accountId,
    userEvents: [ProviderAccountLinked({ userId, accountId, providerId: account.providerId, providerAccountId: account.providerAccountId, scope: account.scope, ...account.tokens })],
  };
}

/** better-auth keeps granted scopes comma-separated; blanks and padding are not scopes. */
export function scopesOf(scope: string | null): string[] {
  return (scope ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
