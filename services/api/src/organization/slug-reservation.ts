import { normalizeSlug, OrganizationSlugReserved, streams } from '@portcullis/contracts';
import {
  eventMetadataOf,
  loadStream,
  sql,
  streamsWithEventsOf,
  systemRequest,
  WrongExpectedVersionError,
  type DatabasePool,
  type EventStore,
  type UnitOfWork,
} from '@portcullis/platform';
import type { OrganizationPorts } from './ports.ts';
import { decideSlugClaim, decideSlugRelease, slugReservationModel, type ClaimSlug } from './organization.decider.ts';

/** The organization holding a slug now, from the log itself: never behind a projection. */
export async function slugHolder(ctx: OrganizationPorts, slug: string): Promise<string | null> {
  const { state } = await loadStream(ctx.store, streams.organizationSlug(slug), slugReservationModel);
  return state.status === 'reserved' ? state.organizationId : null;
}

/** Within the command whose organization event takes the slug: its reservation (refused when it is held). */
export async function claimSlug(unit: UnitOfWork, claim: ClaimSlug): Promise<void> {
  const reservation = await unit.load(streams.organizationSlug(claim.slug), slugReservationModel);
  unit.append(reservation.streamId, decideSlugClaim(claim, reservation.state));
}

/**
 * Within the command of an organization giving up a slug (renamed or deleted): its release, so another can
 * take it. A slug stored before slugs were normalized is also held in its normalized form (see
 * `carrySlugReservationsForward`): that goes too, unless the organization is moving to it.
 */
export async function releaseSlug(unit: UnitOfWork, release: { slug: string; organizationId: string; movingTo?: string | undefined }): Promise<void> {
  const forms = [...new Set([release.slug, normalizeSlug(release.slug)])].filter((slug) => slug !== release.movingTo);
  for (const slug of forms) {
    const reservation = await unit.load(streams.organizationSlug(slug), slugReservationModel);
    unit.append(reservation.streamId, decideSlugRelease({ slug, organizationId: release.organizationId }, reservation.state));
  }
}

const UPGRADE = 'organization-slugs-normalized';
const SLUG_STREAM_PREFIX = streams.organizationSlug('');

/**
 * Carries the slugs of a log written before slugs were normalized to their normalized form, so a look-alike
 * of one (`alpha` beside an older `ALPHA`) is refused as taken: each held slug that is not in normalized form
 * reserves that form for its organization too, unless another holds it already (of two old look-alikes, the
 * first carried keeps it). Racing api processes carry each once (the append expects the version read).
 * Done once, recorded in `log_upgrade`.
 */
export async function carrySlugReservationsForward(store: EventStore, pool: DatabasePool): Promise<number> {
  if (await pool.maybeOneFirst(sql.unsafe`SELECT 1 FROM log_upgrade WHERE name = ${UPGRADE}`)) return 0;
  // Sorted by id, so every api process carries two look-alikes in the same order.
  const ids = (await streamsWithEventsOf(store, [OrganizationSlugReserved.type])).sort();
  let carried = 0;
  for (const id of ids) {
    const slug = id.slice(SLUG_STREAM_PREFIX.length);
    const normalized = normalizeSlug(slug);
    if (normalized === slug || normalized === '') continue;
    const held = await loadStream(store, id, slugReservationModel);
    if (held.state.status !== 'reserved') continue;
    const target = await loadStream(store, streams.organizationSlug(normalized), slugReservationModel);
    if (target.state.status === 'reserved') continue;
    try {
      await store.append([
        {
          streamId: streams.organizationSlug(normalized),
          expectedVersion: target.version,
          events: [{ ...OrganizationSlugReserved({ slug: normalized, organizationId: held.state.organizationId }), metadata: eventMetadataOf(systemRequest, null, new Date()) }],
        },
      ]);
      carried += 1;
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    }
  }
  await pool.query(sql.unsafe`INSERT INTO log_upgrade (name) VALUES (${UPGRADE}) ON CONFLICT (name) DO NOTHING`);
  return carried;
}
