import { streams, type DomainEvent, type EventMetadata } from '@portcullis/contracts';
import type { StreamWrite } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { streamWrite } from '../write-model.ts';
import { decideMember } from './member.decider.ts';
import { loadOrganization } from './organization-model.ts';
import { loadMembershipIndex, membershipIndexWrites } from './membership-index.ts';

/**
 * A deleted user leaves every organization they belong to, in the same atomic append as the deletion: each
 * organization stream records it against the version it was decided on, so its member count and owner count
 * never include someone who no longer exists (a conflict retries the whole deletion).
 */
export async function membershipRemovalWrites(ctx: ApiContext, userId: string, metadata: EventMetadata): Promise<StreamWrite[]> {
  // Found on the user's index on the log, which the append requires unchanged: a membership gained a moment
  // ago (an invitation accepted) is not left behind.
  const index = await loadMembershipIndex(ctx.store, userId);
  const writes: StreamWrite[] = [];
  const removed: DomainEvent[] = [];
  for (const organizationId of index.state.organizationIds) {
    const { state, version } = await loadOrganization(ctx, organizationId);
    const events = decideMember({ type: 'remove-deleted-user', userId }, state);
    if (events.length > 0) writes.push(streamWrite(streams.organization(organizationId), version, events, metadata));
    removed.push(...events);
  }
  const indexWrites = membershipIndexWrites(removed, metadata, new Map([[userId, index.version]]));
  return [...writes, ...(indexWrites.length > 0 ? indexWrites : [{ streamId: streams.userOrganizations(userId), expectedVersion: index.version, events: [] }])];
}
