import type { DomainEvent, StreamModel } from '@portcullis/contracts';

/** A provider account's latest tokens, as the log holds them (sealed there, open here). */
export interface HeldProviderTokens {
  readonly providerId: string;
  readonly providerAccountId: string;
  readonly accessToken: string | null;
  readonly refreshToken: string | null;
  readonly idToken: string | null;
  readonly accessTokenExpiresAt: string | null;
  readonly refreshTokenExpiresAt: string | null;
  readonly scope: string | null;
}

/** The user stream as get-access-token and refresh-token read it: each provider account's tokens, by account id. */
export type ProviderTokensState = ReadonlyMap<string, HeldProviderTokens>;

export function evolveProviderTokens(state: ProviderTokensState, event: DomainEvent): ProviderTokensState {
  switch (event.type) {
    case 'user.provider_account_linked.v1': {
      const { accountId, userId: _userId, ...tokens } = event.data;
      return new Map(state).set(accountId, tokens);
    }
    case 'user.provider_tokens_updated.v1': {
      const held = state.get(event.data.accountId);
      if (!held) return state;
      const { accountId, userId: _userId, providerId: _providerId, scope, ...tokens } = event.data;
      return new Map(state).set(accountId, { ...held, ...tokens, scope: scope === undefined ? held.scope : scope });
    }
    case 'user.account_unlinked.v1': {
      if (!state.has(event.data.accountId)) return state;
      const next = new Map(state);
      next.delete(event.data.accountId);
      return next;
    }
    case 'user.deleted.v1':
      return new Map();
    default:
      return state;
  }
}

/** Never snapshotted: these tokens stay in the log alone, sealed at rest (a snapshot would be one more copy). */
export const providerTokensModel: StreamModel<ProviderTokensState> = {
  name: 'provider-tokens',
  revision: 1,
  initial: () => new Map(),
  evolve: (state, event) => evolveProviderTokens(state, event),
  snapshots: false,
};
