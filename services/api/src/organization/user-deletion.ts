import { streams } from '@portcullis/contracts';
import type { UnitOfWork } from '@portcullis/platform';
import { decideMember } from './member.decider.ts';
import { membershipIndexModel } from './membership-index.decider.ts';
import { recordMembershipChanges } from './membership-index.ts';
import { organizationModel } from './organization.state.ts';

/**
 * A deleted user leaves every organization they belong to, in the same atomic append as the deletion: each
 * organization stream records it against the version it was decided on, so its member count and owner count
 * never include someone who no longer exists (a conflict retries the whole deletion).
 */
export async function removeMembershipsOf(unit: UnitOfWork, userId: string): Promise<void> {
  // Found on the user's index on the log, which the append requires unchanged: a membership gained a moment
  // ago (an invitation accepted) is not left behind.
  const index = await unit.load(streams.userOrganizations(userId), membershipIndexModel);
  for (const organizationId of index.state.organizationIds) {
    const organization = await unit.load(streams.organization(organizationId), organizationModel);
    const events = decideMember({ type: 'remove-deleted-user', userId }, organization.state);
    unit.append(organization.streamId, events);
    recordMembershipChanges(unit, events);
  }
}
