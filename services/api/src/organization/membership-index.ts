import {
  OrganizationJoined,
  OrganizationLeft,
  streams,
  type DomainEvent,
  type EventMetadata,
  type StreamModel,
} from '@portcullis/contracts';
import type { EventStore, ExpectedVersion, StreamWrite } from '@portcullis/platform';
import { fold } from '@portcullis/platform';

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

/** A user's index as the log holds it, with the version a decision on it appends against. */
export async function loadMembershipIndex(store: Pick<EventStore, 'readStream'>, userId: string): Promise<{ state: MembershipIndexState; version: number }> {
  const read = await store.readStream(streams.userOrganizations(userId));
  return { state: fold(membershipIndexModel, read), version: read.version };
}

/** What an organization's events change in its members' indexes, by user. */
export function membershipIndexEvents(events: readonly DomainEvent[]): Map<string, DomainEvent[]> {
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
 * The index writes for an organization's events, in the same append: each at the version a decision read
 * it at (`checked`), or 'any', since joining or leaving one organization never conflicts with another.
 */
export function membershipIndexWrites(
  events: readonly DomainEvent[],
  metadata: EventMetadata,
  checked: ReadonlyMap<string, number> = new Map(),
): StreamWrite[] {
  return [...membershipIndexEvents(events)].map(([userId, indexEvents]) => ({
    streamId: streams.userOrganizations(userId),
    expectedVersion: (checked.get(userId) ?? 'any') as ExpectedVersion,
    events: indexEvents.map((e) => ({ type: e.type, data: e.data, metadata })),
  }));
}
