import { describe, expect, it } from 'vitest';
import { MemberAdded, MemberRemoved, OrganizationDeleted, OrganizationJoined, OrganizationLeft, TeamCreated } from '@portcullis/contracts';
import { foldSpec } from '../decider-spec.test-support.ts';
import { decideMembershipIndexes, evolveMembershipIndex, initialMembershipIndex } from './membership-index.decider.ts';

const folded = foldSpec({ evolve: evolveMembershipIndex, initial: initialMembershipIndex });
const joined = (organizationId: string) => OrganizationJoined({ userId: 'u1', organizationId });
const left = (organizationId: string) => OrganizationLeft({ userId: 'u1', organizationId });

describe('membership index', () => {
  it('folds the organizations a user belongs to, once each, in the order joined', () => {
    folded([joined('o1'), joined('o2'), joined('o1')]).then({ organizationIds: ['o1', 'o2'] });
    folded([joined('o1'), joined('o2'), left('o1')]).then({ organizationIds: ['o2'] });
    folded([left('o3')]).then({ organizationIds: [] });
  });

  it('decides what an organization\'s events change in its members\' indexes, by user', () => {
    const added = MemberAdded({ organizationId: 'o1', memberId: 'm1', userId: 'u1', role: 'member', teamId: null, via: 'added' });
    const removed = MemberRemoved({ organizationId: 'o1', memberId: 'm2', userId: 'u2', reason: 'removed' });
    const deleted = OrganizationDeleted({ organizationId: 'o1', slug: 'acme', memberUserIds: ['u1', 'u3'] });
    const decided = decideMembershipIndexes([added, removed, TeamCreated({ organizationId: 'o1', teamId: 't1', name: 'Core' }), deleted]);
    expect(Object.fromEntries(decided)).toEqual({
      u1: [joined('o1'), left('o1')],
      u2: [OrganizationLeft({ userId: 'u2', organizationId: 'o1' })],
      u3: [OrganizationLeft({ userId: 'u3', organizationId: 'o1' })],
    });
    expect(decideMembershipIndexes([TeamCreated({ organizationId: 'o1', teamId: 't1', name: 'Core' })]).size).toBe(0);
  });
});
