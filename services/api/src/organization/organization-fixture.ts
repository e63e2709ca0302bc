import { MemberAdded, OrganizationCreated, TeamCreated, type DomainEvent, type TimedEvent } from '@portcullis/contracts';

/** The organization decider specs' common ground: one organization with a member of each kind and two teams. */
export const ORG = 'org-1';
const T0 = '2025-01-01T00:00:00.000Z';

export const at = (event: DomainEvent): TimedEvent => ({ event, occurredAt: T0 });

const member = (userId: string, role: string) =>
  MemberAdded({ organizationId: ORG, memberId: `m-${userId}`, userId, role, teamId: null, via: 'added' });

/** One user per role, two that hold several roles or an unknown one, and teams `t-1` and `t-2`. */
export const acmeWithTeams: readonly TimedEvent[] = [
  OrganizationCreated({ organizationId: ORG, name: 'Acme', slug: 'acme', logo: null, metadata: null, createdByUserId: 'u-owner' }),
  member('u-owner', 'owner'),
  member('u-admin', 'admin'),
  member('u-member', 'member'),
  member('u-both', 'member,admin'),
  member('u-stranger-role', 'auditor'),
  TeamCreated({ organizationId: ORG, teamId: 't-1', name: 'Core' }),
  TeamCreated({ organizationId: ORG, teamId: 't-2', name: 'Edge' }),
].map(at);
