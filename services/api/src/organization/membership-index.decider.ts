import { OrganizationJoined, OrganizationLeft, type DomainEvent, type StreamModel } from '@portcullis/contracts';

/** The organizations a user belongs to, from `user-organizations-<userId>`. */
export interface MembershipIndexState {
  readonly organizationIds: readonly string[];
}

export const initialMembershipIndex = (): MembershipIndexState => ({ organizationIds: [] });

export function evolveMembershipIndex(state: MembershipIndexState, event: DomainEvent): MembershipIndexState {
  switch (event.type) {
    case 'organization_index.joined.v1':
      return state.organizationIds.includes(event.data.organizationId) ? state : { organizationIds: [...state.organizationIds, event.data.organizationId] };
    case 'organization_index.left.v1':
      return { organizationIds: state.organizationIds.filter((id) => id !== event.data.organizationId) };
    default:
      return state;
  }
}

export const membershipIndexModel: StreamModel<MembershipIndexState> = {
  name: 'user-organizations',
  revision: 1,
  initial: initialMembershipIndex,
  evolve: evolveMembershipIndex,
};

/** What an organization's events change in its members' indexes, by user: each joining and each leaving. */
export function decideMembershipIndexes(events: readonly DomainEvent[]): Map<string, DomainEvent[]> {
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
