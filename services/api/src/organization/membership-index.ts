import { streams, type DomainEvent } from '@portcullis/contracts';
import type { UnitOfWork } from '@portcullis/platform';
import { decideMembershipIndexes } from './membership-index.decider.ts';

/**
 * Within a command: what an organization's events change in its members' indexes, each appended at the
 * version the command read it at (its decision counted on it: an organization limit), or 'any', since
 * joining or leaving one organization never conflicts with another.
 */
export function recordMembershipChanges(unit: UnitOfWork, events: readonly DomainEvent[]): void {
  for (const [userId, indexEvents] of decideMembershipIndexes(events)) {
    const streamId = streams.userOrganizations(userId);
    unit.append(streamId, indexEvents, { expected: unit.versionOf(streamId) ?? 'any' });
  }
}
