import type { DomainEvent } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import { foldDecided } from './organization-answers.ts';
import { decideOrganization, type OrganizationChanges } from './organization.decider.ts';
import { runOrganizationCommand } from './organization-model.ts';
import { requireOrganization, type ActiveOrganization } from './organization.state.ts';
import type { OrganizationPorts } from './ports.ts';
import { claimSlug, releaseSlug } from './slug-reservation.ts';

/** The slug an update moves the organization to, if it does. */
function movedSlug(events: readonly DomainEvent[]): string | undefined {
  for (const event of events) if (event.type === 'organization.updated.v1') return event.data.slug;
  return undefined;
}

/** update-organization: name, slug, logo, metadata; a new slug is claimed and the old one released in the same append. */
export function updateOrganization(
  ports: Pick<OrganizationPorts, 'commands'>,
  request: RequestMetadata,
  command: { readonly organizationId: string; readonly actorUserId: string; readonly changes: OrganizationChanges },
): Promise<ActiveOrganization> {
  const { organizationId, actorUserId, changes } = command;
  return runOrganizationCommand(ports, { name: 'organization.update', request, organizationId, actorId: actorUserId }, async (loaded, unit) => {
    const events = decideOrganization({ type: 'update', actorUserId, changes }, loaded.state);
    const before = requireOrganization(loaded.state);
    const newSlug = movedSlug(events);
    if (newSlug !== undefined) {
      await claimSlug(unit, { slug: newSlug, organizationId, refusal: 'ORGANIZATION_SLUG_TAKEN_ON_UPDATE' });
      await releaseSlug(unit, { slug: before.slug, organizationId, movingTo: newSlug });
    }
    return { events, result: foldDecided(loaded.state, events, unit.now) };
  });
}
