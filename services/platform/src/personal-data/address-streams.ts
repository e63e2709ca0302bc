import { addressInStreamId } from '@portcullis/contracts';
import { sql, type DatabasePool } from '../database/pool.ts';
import { WrongExpectedVersionError, type EventStore } from '../event-store/event-store.ts';
import { streamsWithEventsOf } from '../event-store/streams-of-types.ts';

/**
 * What opens every reservation stream: a stream of either is written only by claiming its address, so the
 * streams holding one of these are all there are.
 */
const RESERVATIONS = ['email.reserved.v1', 'username.reserved.v1'] as const;
const RESERVATION_PREFIXES = ['email-', 'username-'] as const;

const UPGRADE = 'address-streams-keyed';

/**
 * Carries the email and username reservations of a log written before streams were keyed by address hash
 * (`email-alice@example.com`) to their keyed names, so uniqueness still holds for them: each old stream's
 * events are appended again, encrypted, to the keyed stream (expected "no stream", so racing api processes
 * carry each once), the copy naming its original as cause. The old streams stay where they are: the hash
 * chain covers their ids and bytes, so they keep their plaintext (README: older events). Sign-in guard
 * streams are not carried: their windows start afresh. Done once, recorded in `log_upgrade`.
 */
export async function carryAddressStreamsForward(stores: { readonly stored: EventStore; readonly protected: EventStore }, pool: DatabasePool): Promise<number> {
  if (await pool.maybeOneFirst(sql.unsafe`SELECT 1 FROM log_upgrade WHERE name = ${UPGRADE}`)) return 0;
  const ids = (await streamsWithEventsOf(stores.stored, RESERVATIONS)).filter((id) => RESERVATION_PREFIXES.some((prefix) => id.startsWith(prefix)));
  let carried = 0;
  for (const id of ids) {
    if (addressInStreamId(id) === null) continue;
    const old = await stores.stored.readStream(id);
    if (old.events.length === 0) continue;
    try {
      await stores.protected.append([
        {
          streamId: id,
          expectedVersion: 'no_stream',
          events: old.events.map((e) => ({ type: e.type, data: e.data, metadata: { ...e.metadata, causationId: e.eventId } })),
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
