import type { EventActor } from './define-event.ts';
import { actorOf, type EventMetadata } from './define-event.ts';

/**
 * Personal data in the log, declared per event type: which fields hold it and whose key protects them.
 * The event store boundary (`services/platform/src/event-store/protected-event-store.ts`) encrypts these
 * fields on append and decrypts them on every read; destroying a subject's key erases them everywhere
 * while the hash chain, which hashes the stored ciphertext, still verifies (issue 25, crypto-shredding).
 */

/** What an erased field reads as. A string, so every published schema (`z.string()`) still parses it. */
export const ERASED = '[erased]';

/**
 * Whose key protects a value. `user`: a user's own key, destroyed when the user is deleted. `address`: an
 * email address or username that is not (or not yet) known as a user's (an invitation's address, a failed
 * sign-in's identifier), keyed by a keyed hash of the address and destroyed when a user holding that
 * address is deleted.
 */
export type PersonalSubject = { readonly user: string } | { readonly address: string };

export interface PersonalDataRule {
  /** Dotted paths into the event's data of string (or null) values; a missing or null value is left as it is. */
  readonly fields: readonly string[];
  /** Whose key protects them in this event, or null where nothing in it is personal. */
  subject(data: Record<string, unknown>): PersonalSubject | null;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

function byUser(field: string): PersonalDataRule['subject'] {
  return (data) => {
    const id = text(data[field]);
    return id === null ? null : { user: id };
  };
}

/** The user's key when the event names one, else the address's (a sign-in for an address nobody holds). */
function byUserElseAddress(userField: string, addressField: string): PersonalDataRule['subject'] {
  return (data) => {
    const id = text(data[userField]);
    if (id !== null) return { user: id };
    const address = text(data[addressField]);
    return address === null ? null : { address: address.toLowerCase() };
  };
}

function byAddress(field: string): PersonalDataRule['subject'] {
  return (data) => {
    const address = text(data[field]);
    return address === null ? null : { address: address.toLowerCase() };
  };
}

/** Each rule names its event type; an event type without one carries nothing personal in its data. */
export const personalDataRules: Readonly<Record<string, readonly PersonalDataRule[]>> = {
  'user.registered.v1': [{ fields: ['email', 'name', 'image'], subject: byUser('userId') }],
  'user.updated.v1': [{ fields: ['name', 'image'], subject: byUser('userId') }],
  'email.reserved.v1': [{ fields: ['email'], subject: byUser('userId') }],
  'email.released.v1': [{ fields: ['email'], subject: byUser('userId') }],
  'credentials.sign_in_failed.v1': [{ fields: ['email'], subject: byUserElseAddress('userId', 'email') }],
  'credentials.username_sign_in_failed.v1': [{ fields: ['username'], subject: byUserElseAddress('userId', 'username') }],
  'credentials.sign_in_locked.v1': [{ fields: ['identifier'], subject: byUserElseAddress('userId', 'identifier') }],
  'credentials.sign_in_unlocked.v1': [{ fields: ['identifier'], subject: byUser('userId') }],
  'user.email_verified.v1': [{ fields: ['email'], subject: byUser('userId') }],
  'user.email_changed.v1': [{ fields: ['previousEmail', 'email'], subject: byUser('userId') }],
  'user.deleted.v1': [{ fields: ['email'], subject: byUser('userId') }],
  'username.reserved.v1': [{ fields: ['username'], subject: byUser('userId') }],
  'username.released.v1': [{ fields: ['username'], subject: byUser('userId') }],
  'user.username_changed.v1': [{ fields: ['username', 'displayUsername'], subject: byUser('userId') }],
  // A provider's tokens are secrets as well as personal: sealed like the rest, and redacted from audit answers.
  'user.provider_account_linked.v1': [{ fields: ['providerAccountId', 'accessToken', 'refreshToken', 'idToken'], subject: byUser('userId') }],
  'user.provider_tokens_updated.v1': [{ fields: ['accessToken', 'refreshToken', 'idToken'], subject: byUser('userId') }],
  'provider_account.claimed.v1': [{ fields: ['providerAccountId'], subject: byUser('userId') }],
  'provider_account.released.v1': [{ fields: ['providerAccountId'], subject: byUser('userId') }],
  'social.flow_started.v1': [{ fields: ['linkEmail'], subject: byUser('linkUserId') }],
  'session.created.v1': [{ fields: ['ipAddress', 'userAgent'], subject: byUser('userId') }],
  'session.created.v2': [{ fields: ['ipAddress', 'userAgent'], subject: byUser('userId') }],
  'session.impersonation_started.v1': [{ fields: ['ipAddress', 'userAgent'], subject: byUser('userId') }],
  // The invitee is an address until someone accepts: the address's key, which that person's deletion destroys.
  'organization.invitation_created.v1': [{ fields: ['email'], subject: byAddress('email') }],
  'mail.job_queued.v1': [
    // An invitation mail goes to the invitee's address (its `userId` is the inviter's); every other to the user.
    { fields: ['to', 'name', 'newEmail'], subject: (data) => (data.kind === 'invitation' ? byAddress('to')(data) : byUser('userId')(data)) },
    { fields: ['invitation.inviterName', 'invitation.inviterEmail'], subject: byUser('userId') },
  ],
};

/** The metadata fields that are personal: where the request came from and with what. */
export const personalMetadataFields = ['ipAddress', 'userAgent'] as const;

/**
 * Whose key protects an event's client address and user agent: the acting user's (it is their device; an
 * admin behind an impersonation is the one at the keyboard), else the first subject its data names (the
 * user signing up, the address failing to sign in) or the user it is about (`userId`), else none: a request by nobody about nobody (a
 * perimeter refusal, a server call) keeps them readable, as the perimeter's stream is named by the address.
 */
export function metadataSubject(type: string, data: Record<string, unknown>, metadata: EventMetadata): PersonalSubject | null {
  const actor: EventActor = actorOf(metadata);
  const acting = actor.kind === 'impersonator' ? (actor.impersonatorId ?? null) : actor.kind === 'user' || actor.kind === 'admin' ? actor.id : null;
  if (acting) return { user: acting };
  for (const rule of personalDataRules[type] ?? []) {
    const subject = rule.subject(data);
    if (subject) return subject;
  }
  const userId = text(data.userId);
  return userId === null ? null : { user: userId };
}

/**
 * What an event erases when it is appended: the user's key, and the key of the address the user held (the
 * invitations sent to it, the failed sign-ins that named it). The deletion's own email is read before the
 * key goes, by whoever erases (see `Eraser`).
 */
export function erasedSubjects(type: string, data: Record<string, unknown>): PersonalSubject[] {
  if (type !== 'user.deleted.v1') return [];
  const subjects: PersonalSubject[] = [];
  const userId = text(data.userId);
  if (userId) subjects.push({ user: userId });
  const address = readableAddress(data.email);
  if (address) subjects.push({ address });
  return subjects;
}

/** An address as an event holds it, lowercased as its key is named; null where there is none or it reads as erased. */
export function readableAddress(value: unknown): string | null {
  const address = text(value);
  return address === null || address === ERASED ? null : address.toLowerCase();
}

/**
 * Stream ids that would spell an address: the reservations and sign-in guards of emails and usernames.
 * The store names them by a keyed hash of that part (`email-hmac-<hex>`), so neither the log nor the audit
 * index keeps the address readable; callers keep using `streams.email(address)`. `sign-in-account-<userId>`
 * holds an id, not an address. A provider's account id names a person too (`provider-account-`).
 */
const addressStreamPrefixes = ['sign-in-username-', 'sign-in-', 'email-', 'username-', 'provider-account-'] as const;

/** The prefix and the address of a stream id that spells one, or null. */
export function addressInStreamId(streamId: string): { readonly prefix: string; readonly address: string } | null {
  if (streamId.startsWith('sign-in-account-')) return null;
  for (const prefix of addressStreamPrefixes) {
    if (streamId.startsWith(prefix)) {
      const address = streamId.slice(prefix.length);
      // Already a keyed name (an id read back from the log): left as it is.
      if (HASHED_ADDRESS.test(address)) return null;
      return { prefix, address };
    }
  }
  return null;
}

/** A keyed name's tail: no email (which has an '@') or username (letters, digits, '_' and '.') looks like it. */
const HASHED_ADDRESS = /^hmac-[0-9a-f]{64}$/;
