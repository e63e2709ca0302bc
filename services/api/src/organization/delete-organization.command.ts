import type { RequestMetadata } from '@portcullis/platform';
import { decideOrganization } from './organization.decider.ts';
import { runOrganizationCommand } from './organization-model.ts';
import { requireOrganization, type ActiveOrganization } from './organization.state.ts';
import type { OrganizationPorts } from './ports.ts';
import { releaseSlug } from './slug-reservation.ts';

/** delete-organization: by its owner; the slug is released in the same append, free for a new organization. */
export function deleteOrganization(
  ports: Pick<OrganizationPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly actorUserId: string },
): Promise<ActiveOrganization> {
  const { organizationId, actorUserId } = command;
  return runOrganizationCommand(ports, { name: 'organization.delete', request, organizationId, actorId: actorUserId }, async (loaded, unit) => {
    const events = decideOrganization({ type: 'delete', actorUserId }, loaded.state);
    const organization = requireOrganization(loaded.state);
    await releaseSlug(unit, { slug: organization.slug, organizationId });
    return { events, result: organization };
  });
}
