import { streams, type EventMetadata } from '@portcullis/contracts';
import type { StreamWrite } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { loadStream, streamWrite, type Loaded } from '../write-model.ts';
import {
  decideSlugClaim,
  decideSlugRelease,
  evolveSlugReservation,
  initialSlugReservation,
  type ClaimSlug,
  type SlugReservationState,
} from './organization.decider.ts';

export function loadSlugReservation(ctx: ApiContext, slug: string): Promise<Loaded<SlugReservationState>> {
  return loadStream(ctx.store, streams.organizationSlug(slug), evolveSlugReservation, initialSlugReservation);
}

/** The organization holding a slug now, from the log itself: never behind a projection. */
export async function slugHolder(ctx: ApiContext, slug: string): Promise<string | null> {
  const { state } = await loadSlugReservation(ctx, slug);
  return state.status === 'reserved' ? state.organizationId : null;
}

/** The reservation of a slug, for the same append as the organization event that takes it. */
export async function slugClaimWrite(ctx: ApiContext, claim: ClaimSlug, metadata: EventMetadata): Promise<StreamWrite> {
  const { state, version } = await loadSlugReservation(ctx, claim.slug);
  return streamWrite(streams.organizationSlug(claim.slug), version, decideSlugClaim(claim, state), metadata);
}

/** The release of a slug an organization gives up (renamed or deleted), so another can take it. */
export async function slugReleaseWrite(
  ctx: ApiContext,
  release: { slug: string; organizationId: string },
  metadata: EventMetadata,
): Promise<StreamWrite> {
  const { state, version } = await loadSlugReservation(ctx, release.slug);
  return streamWrite(streams.organizationSlug(release.slug), version, decideSlugRelease(release, state), metadata);
}
