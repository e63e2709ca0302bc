import { emailReservationModel, ERASED, readableAddress, storedTypesReadingAs, streams } from '@portcullis/contracts';
import { fold } from '../command/unit-of-work.ts';
import { sql, type DatabasePool } from '../database/pool.ts';
import type { EventStore } from '../event-store/event-store.ts';
import type { EventBody, PersonalData } from './personal-data.ts';

/**
 * The statement that clears the audit index's client addresses the keys of `userIds` (a text[]) protected:
 * the users' own requests, and those of nobody signed in about them (a sign-up). Run by the erasure and by
 * the audit index itself, which may have read a deletion's events, or earlier ones, before the key went.
 */
export function auditAddressesErasure(userIds: ReturnType<typeof sql.array> | ReturnType<typeof sql.fragment>) {
  return sql.unsafe`
    UPDATE audit_event SET ip = NULL
    WHERE ip IS NOT NULL AND (actor_id = ANY(${userIds}) OR (actor_id IS NULL AND position IN (
      SELECT position FROM audit_event_subject WHERE subject = ANY(SELECT 'user:' || id FROM unnest(${userIds}) AS id))))`;
}

/**
 * What a user's deletion destroys besides the keys: the copies of their personal data that live outside
 * the log, where a read model or a cache would otherwise keep them readable (issue 25). Run before the keys
 * go, while the deletion's own email still opens, and idempotent: the api runs it right after appending
 * `user.deleted.v1`, and the projector's erasure projection runs it again, which completes an erasure whose
 * api died in between.
 */
export class Eraser {
  constructor(
    private readonly pool: DatabasePool,
    private readonly personalData: PersonalData,
    /** The log as stored (sealed values, keyed stream names): whatever engine holds it. */
    private readonly stored: Pick<EventStore, 'readStream' | 'readStreams'>,
  ) {}

  /** Erases what the event erases (a user's deletion; nothing for any other event). */
  async erase(event: Pick<EventBody, 'type' | 'data'>): Promise<void> {
    const erased = this.personalData.erasedBy(event);
    if (erased.length === 0) return;
    const data = event.data as { userId: string; email: string };
    const current = readableAddress(data.email);
    // The addresses the user held before an email change are theirs too: the invitations and failed
    // sign-ins that named one, kept under that address's key, go with it (the current one's is in `erased`).
    const previous = await this.previousAddresses(data.userId, current);
    const subjectIds = [...erased, ...previous.map((address) => this.personalData.cipher.subjectId({ address }))];
    const addresses = current === null ? previous : [current, ...previous];
    const recipients = sql.array(addresses, 'text');
    // Kept folds (snapshots) are not read: their personal values are sealed under the keys erased below
    // (see `SnapshotSealing`), so no scan of them is needed, whatever their number. Unsealed ones exist only
    // where a build older than sealing still ran during an upgrade: they go, through the partial index that
    // holds nothing else (migration 1732230000320).
    await this.pool.transaction(async (tx) => {
      // The predicate as a literal, the index's own: a parameter would keep the planner from the index.
      await tx.query(sql.unsafe`DELETE FROM snapshots WHERE model NOT LIKE '%+sealed'`);
      await tx.query(auditAddressesErasure(sql.array([data.userId], 'text')));
      await tx.query(sql.unsafe`
        UPDATE mail_delivery SET recipient = ${ERASED},
          job = job || jsonb_build_object('to', ${ERASED}::text, 'name', ${ERASED}::text, 'newEmail', NULL, 'invitation', NULL),
          status = CASE WHEN status = 'pending' THEN 'dead' ELSE status END,
          dead_at = CASE WHEN status = 'pending' THEN now() ELSE dead_at END,
          last_error = CASE WHEN status = 'pending' THEN 'recipient erased' ELSE last_error END,
          updated_at = now()
        WHERE user_id = ${data.userId} OR lower(recipient) = ANY(${recipients})`);
      await tx.query(sql.unsafe`
        DELETE FROM dev_mailbox
        WHERE job_id IN (SELECT job_id FROM mail_delivery WHERE user_id = ${data.userId}) OR lower(recipient) = ANY(${recipients})`);
      // Invitations addressed to the user (accepted ones stay listed, with the address erased).
      await tx.query(sql.unsafe`UPDATE invitation SET email = ${ERASED} WHERE lower(email) = ANY(${recipients})`);
    });
    await this.personalData.keys.erase(subjectIds);
  }

  /**
   * The addresses an email change left behind, lowercased, but those taken by another user since (a key
   * of an address is the address's, not one holder's: a later holder's invitations under it stay theirs).
   * Read while the user's key still opens them; run again once it is gone (the projector completing an
   * erasure), they read as erased, and their keys went with the user's.
   */
  private async previousAddresses(userId: string, current: string | null): Promise<string[]> {
    const { events } = await this.stored.readStream(streams.user(userId));
    const opened = await this.personalData.decode(events.filter((event) => emailChangeTypes.has(event.type)));
    const left = new Set(opened.map((change) => readableAddress((change.data as { previousEmail?: unknown }).previousEmail)).filter((address) => address !== null));
    if (current !== null) left.delete(current);
    if (left.size === 0) return [];
    const streamOf = new Map([...left].map((address) => [this.personalData.storedStreamId(streams.email(address)), address]));
    for (const [streamId, read] of await this.stored.readStreams([...streamOf.keys()])) {
      const reservation = fold(emailReservationModel, read);
      if (reservation.status === 'reserved' && reservation.userId !== userId) left.delete(streamOf.get(streamId)!);
    }
    return [...left];
  }
}

const emailChangeTypes = new Set(storedTypesReadingAs(new Set(['user.email_changed.v1'])));
