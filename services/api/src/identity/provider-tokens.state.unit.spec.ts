import { describe, it } from 'vitest';
import { AccountUnlinked, ProviderAccountLinked, ProviderTokensUpdated, UserDeleted } from '@portcullis/contracts';
import { foldSpec } from '../decider-spec.test-support.ts';
import { providerTokensModel } from './provider-tokens.state.ts';

const folded = foldSpec({ evolve: (state, event) => providerTokensModel.evolve(state, event, { occurredAt: '' }), initial: () => providerTokensModel.initial() });
const linked = ProviderAccountLinked({
  userId: 'u1',
  accountId: 'g1',
  providerId: 'github',
  providerAccountId: '4242',
  scope: 'read:user',
  accessToken: 'at-1',
  refreshToken: 'rt-1',
  idToken: null,
  accessTokenExpiresAt: '2026-01-01T01:00:00.000Z',
  refreshTokenExpiresAt: null,
});
const renewed = ProviderTokensUpdated({
  userId: 'u1',
  accountId: 'g1',
  providerId: 'github',
  accessToken: 'at-2',
  refreshToken: 'rt-2',
  idToken: null,
  accessTokenExpiresAt: '2026-01-01T02:00:00.000Z',
  refreshTokenExpiresAt: null,
});

describe("a user's provider tokens", () => {
  it('are the latest each account was given, the scopes as granted unless a change names them', () => {
    folded([linked, renewed]).then(
      new Map([['g1', { providerId: 'github', providerAccountId: '4242', scope: 'read:user', accessToken: 'at-2', refreshToken: 'rt-2', idToken: null, accessTokenExpiresAt: '2026-01-01T02:00:00.000Z', refreshTokenExpiresAt: null }]]),
    );
  });

  it('go with the account, and with the user', () => {
    folded([linked, AccountUnlinked({ userId: 'u1', accountId: 'g1', providerId: 'github' })]).then(new Map());
    folded([linked, UserDeleted({ userId: 'u1', email: 'ada@example.com' })]).then(new Map());
  });

  it('are never snapshotted: they stay sealed at rest', () => {
    if (providerTokensModel.snapshots !== false) throw new Error('provider tokens must not be snapshotted');
  });
});
