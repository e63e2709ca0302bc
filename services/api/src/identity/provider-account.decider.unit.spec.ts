import { describe, it } from 'vitest';
import { ProviderAccountClaimed, ProviderAccountReleased } from '@portcullis/contracts';
import { deciderSpec, foldSpec } from '../decider-spec.test-support.ts';
import {
  decideProviderAccountClaim,
  decideProviderAccountRelease,
  evolveProviderAccountClaim,
  initialProviderAccountClaim,
} from './provider-account.decider.ts';

const key = { providerId: 'github', providerAccountId: '4242' };
const claimed = ProviderAccountClaimed({ ...key, userId: 'u1', accountId: 'a1' });
const claim = deciderSpec({ evolve: evolveProviderAccountClaim, initial: initialProviderAccountClaim, decide: decideProviderAccountClaim });
const release = deciderSpec({ evolve: evolveProviderAccountClaim, initial: initialProviderAccountClaim, decide: decideProviderAccountRelease });
const folded = foldSpec({ evolve: evolveProviderAccountClaim, initial: initialProviderAccountClaim });

describe("a provider account's claim", () => {
  it('is claimed by the first user to link it', () => {
    claim([]).when({ ...key, userId: 'u1', accountId: 'a1' }).then({ outcome: 'claimed', events: [claimed] });
  });

  it('is held already by the user who has it, with the account it is linked as', () => {
    claim([claimed]).when({ ...key, userId: 'u1', accountId: 'a-new' }).then({ outcome: 'held', accountId: 'a1' });
  });

  it("is someone else's: taken", () => {
    claim([claimed]).when({ ...key, userId: 'u2', accountId: 'a2' }).then({ outcome: 'taken' });
  });

  it('is free again once its holder lets it go, and only its holder can', () => {
    release([claimed]).when({ ...key, userId: 'u2' }).then([]);
    release([claimed]).when({ ...key, userId: 'u1' }).then([ProviderAccountReleased({ ...key, userId: 'u1' })]);
    folded([claimed, ProviderAccountReleased({ ...key, userId: 'u1' })]).then({ status: 'free' });
    claim([claimed, ProviderAccountReleased({ ...key, userId: 'u1' })])
      .when({ ...key, userId: 'u2', accountId: 'a2' })
      .then({ outcome: 'claimed', events: [ProviderAccountClaimed({ ...key, userId: 'u2', accountId: 'a2' })] });
  });
});
