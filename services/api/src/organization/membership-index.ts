import { OrganizationJoined, OrganizationLeft, streams, type DomainEvent, type StreamModel } from '@portcullis/contracts';
import type { UnitOfWork } from '@portcullis/platform';

/** The organizations a user belongs to, from `user-organizations-<userId>`. */
export interface MembershipIndexState {
  readonly organizationIds: readonly string[];
}

export const membershipIndexModel: StreamModel<MembershipIndexState> = {
  name: 'user-organizations',
  revision: 1,
  initial: () => ({ organizationIds: [] }),
  evolve(state, event) {
    switch (event.type) {
      case 'organization_index.joined.v1':
        return state.organizationIds.includes(event.data.organizationId)
          ? state
          : { organizationIds: [...state.organizationIds, event.data.organizationId] };
      case 'organization_index.left.v1':
        return { organizationIds: state.organizationIds.filter((id) => id !== event.data.organizationId) };
      default:
        return state;
    }
  },
};

/** What an organization's events change in its members' indexes, by user. */
function membershipIndexEvents(events: readonly DomainEvent[]): Map<string, DomainEvent[]> {
  const byUser = new Map<string, DomainEvent[]>();
  const add = (userId: string, event: DomainEvent): void => {
    byUser.set(userId, [...(byUser.get(userId) ?? []), event]);
  };
  for (const event of events) {
    switch (event.type) {
      case 'organization.member_added.v1':
        add(event.data.userId, OrganizationJoined({ userId: event.data.userId, organizationId: event.data.organizationId }));
        break;
      case 'organization.member_removed.v1':
        add(event.data.userId, OrganizationLeft({ userId: event.data.userId, organizationId: event.data.organizationId }));
        break;
      case 'organization.deleted.v1':
        for (const userId of event.data.memberUserIds) add(userId, OrganizationLeft({ userId, organizationId: event.data.organizationId }));
        break;
      default:
        break;
    }
  }
  return byUser;
}

/**
 * Within a command: what an organization's events change in its members' indexes, each appended at the
 * version the command read it at (its decision counted on it: an organization limit), or 'any', since
 * joining or leaving one organization never conflicts with another.
 */
export function recordMembershipChanges(unit: UnitOfWork, events: readonly DomainEvent[]): void {
  for (const [userId, indexEvents] of membershipIndexEvents(events)) {
    const streamId = streams.userOrganizations(userId);
    unit.append(streamId, indexEvents, { expected: unit.versionOf(streamId) ?? 'any' });
  }
}
