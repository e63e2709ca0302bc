import { streams, type EventMetadata } from '@portcullis/contracts';
import type { StreamWrite } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { streamWrite } from '../write-model.ts';
import { decideMember } from './member.decider.ts';
import { loadOrganization } from './organization-model.ts';
import { organizationIdsOfUser } from './organization-queries.ts';

/**
 * A deleted user leaves every organization they belong to, in the same atomic append as the deletion: each
 * organization stream records it against the version it was decided on, so its member count and owner count
 * never include someone who no longer exists (a conflict retries the whole deletion).
 */
export async function membershipRemovalWrites(ctx: ApiContext, userId: string, metadata: EventMetadata): Promise<StreamWrite[]> {
  const writes: StreamWrite[] = [];
  for (const organizationId of await organizationIdsOfUser(ctx, userId)) {
    const { state, version } = await loadOrganization(ctx, organizationId);
    const events = decideMember({ type: 'remove-deleted-user', userId }, state);
    if (events.length > 0) writes.push(streamWrite(streams.organization(organizationId), version, events, metadata));
  }
  return writes;
}
