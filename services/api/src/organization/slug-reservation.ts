import { streams, streamModel } from '@portcullis/contracts';
import { loadStream, type UnitOfWork } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { decideSlugClaim, decideSlugRelease, evolveSlugReservation, initialSlugReservation, type ClaimSlug } from './organization.decider.ts';

/** An organization slug's reservation stream `organization-slug-<slug>`. */
const slugReservationModel = streamModel('organization-slug', 1, initialSlugReservation, evolveSlugReservation);

/** The organization holding a slug now, from the log itself: never behind a projection. */
export async function slugHolder(ctx: ApiContext, slug: string): Promise<string | null> {
  const { state } = await loadStream(ctx.store, streams.organizationSlug(slug), slugReservationModel);
  return state.status === 'reserved' ? state.organizationId : null;
}

/** Within the command whose organization event takes the slug: its reservation (refused when it is held). */
export async function claimSlug(unit: UnitOfWork, claim: ClaimSlug): Promise<void> {
  const reservation = await unit.load(streams.organizationSlug(claim.slug), slugReservationModel);
  unit.append(reservation.streamId, decideSlugClaim(claim, reservation.state));
}

/** Within the command of an organization giving up a slug (renamed or deleted): its release, so another can take it. */
export async function releaseSlug(unit: UnitOfWork, release: { slug: string; organizationId: string }): Promise<void> {
  const reservation = await unit.load(streams.organizationSlug(release.slug), slugReservationModel);
  unit.append(reservation.streamId, decideSlugRelease(release, reservation.state));
}
