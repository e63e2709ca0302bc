import { ProviderAccountClaimed, ProviderAccountReleased, streamModel, type DomainEvent } from '@portcullis/contracts';

/** Which user holds one provider's account (`provider-account-<providerId>:<providerAccountId>`). */
export type ProviderAccountClaim =
  | { readonly status: 'free' }
  | { readonly status: 'claimed'; readonly userId: string; readonly accountId: string };

export const initialProviderAccountClaim = (): ProviderAccountClaim => ({ status: 'free' });

export function evolveProviderAccountClaim(state: ProviderAccountClaim, event: DomainEvent): ProviderAccountClaim {
  switch (event.type) {
    case 'provider_account.claimed.v1':
      return { status: 'claimed', userId: event.data.userId, accountId: event.data.accountId };
    case 'provider_account.released.v1':
      return state.status === 'claimed' && state.userId === event.data.userId ? { status: 'free' } : state;
    default:
      return state;
  }
}

export interface ProviderAccountKey {
  readonly providerId: string;
  readonly providerAccountId: string;
}

export type ClaimDecision =
  | { readonly outcome: 'claimed'; readonly events: DomainEvent[] }
  /** The user holds it already: a returning sign-in, or a link of an account already linked. */
  | { readonly outcome: 'held'; readonly accountId: string }
  /** Someone else holds it (better-auth's `account_already_linked_to_different_user`). */
  | { readonly outcome: 'taken' };

export function decideProviderAccountClaim(
  command: ProviderAccountKey & { readonly userId: string; readonly accountId: string },
  state: ProviderAccountClaim,
): ClaimDecision {
  if (state.status === 'claimed') return state.userId === command.userId ? { outcome: 'held', accountId: state.accountId } : { outcome: 'taken' };
  return { outcome: 'claimed', events: [ProviderAccountClaimed({ ...command })] };
}

/** Unlinking or deleting the user frees the provider's account for whoever signs in with it next. */
export function decideProviderAccountRelease(command: ProviderAccountKey & { readonly userId: string }, state: ProviderAccountClaim): DomainEvent[] {
  return state.status === 'claimed' && state.userId === command.userId ? [ProviderAccountReleased({ ...command })] : [];
}

export const providerAccountClaimModel = streamModel('provider-account-claim', 1, initialProviderAccountClaim, evolveProviderAccountClaim);
