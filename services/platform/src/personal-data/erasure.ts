import { ERASED, storedTypesReadingAs, streams } from '@portcullis/contracts';
import { sql, type DatabasePool } from '../database/pool.ts';
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
  ) {}

  /** Erases what the event erases (a user's deletion; nothing for any other event). */
  async erase(event: Pick<EventBody, 'type' | 'data'>): Promise<void> {
    const erased = this.personalData.erasedBy(event);
    if (erased.length === 0) return;
    const data = event.data as { userId: string; email: string };
    const current = openedAddress(data.email);
    // The addresses the user held before an email change are theirs too: the invitations and failed
    // sign-ins that named one, kept under that address's key, go with it (the current one's is in `erased`).
    const previous = await this.previousAddresses(data.userId, current);
    const subjectIds = [...erased, ...previous.map((address) => this.personalData.cipher.subjectId({ address }))];
    const recipients = sql.array(current === null ? previous : [current, ...previous], 'text');
    await this.pool.transaction(async (tx) => {
      // Kept folds of the user's streams (and of the reservations and guards that name the user) hold
      // plaintext; a snapshot is only a cache of the log, so the next load folds from the events instead.
      await tx.query(sql.unsafe`DELETE FROM snapshots WHERE strpos(state::text, ${data.userId}) > 0`);
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
    const changes = (await this.pool.any(sql.unsafe`
      SELECT type, data, metadata FROM events
      WHERE stream_id = ${streams.user(userId)} AND type = ANY(${sql.array(emailChangeTypes, 'text')})`)) as readonly EventBody[];
    const opened = await this.personalData.decode(changes);
    const left = new Set(opened.map((change) => openedAddress((change.data as { previousEmail?: unknown }).previousEmail)).filter((address) => address !== null));
    if (current !== null) left.delete(current);
    const streamOf = new Map([...left].map((address) => [this.personalData.storedStreamId(streams.email(address)), address]));
    // Each reservation's last event: an address reserved by someone else now is theirs.
    const reservations = (await this.pool.any(sql.unsafe`
      SELECT DISTINCT ON (stream_id) stream_id AS "streamId", type, data->>'userId' AS "holder" FROM events
      WHERE stream_id = ANY(${sql.array([...streamOf.keys()], 'text')}) ORDER BY stream_id, stream_version DESC`)) as ReadonlyArray<{ streamId: string; type: string; holder: string }>;
    for (const { streamId, type, holder } of reservations) if (type === 'email.reserved.v1' && holder !== userId) left.delete(streamOf.get(streamId)!);
    return [...left];
  }
}

const emailChangeTypes = storedTypesReadingAs(new Set(['user.email_changed.v1']));

/** An address as read from an event, lowercased, or null where there is none or it reads as erased. */
function openedAddress(value: unknown): string | null {
  return typeof value === 'string' && value !== '' && value !== ERASED ? value.toLowerCase() : null;
}
