import {
  addressInStreamId,
  ERASED,
  erasedSubjects,
  metadataSubject,
  personalDataRules,
  personalMetadataFields,
  type EventMetadata,
  type PersonalSubject,
} from '@portcullis/contracts';
import type { PersonalDataCipher } from '../crypto/personal-data-cipher.ts';
import type { DataKeys } from './data-keys.ts';

/** An event as the codec sees it, stored or about to be. */
export interface EventBody {
  readonly type: string;
  readonly data: unknown;
  readonly metadata: EventMetadata;
}

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The record holding a dotted path's last step, copied along the way so the caller's object is not touched. */
function parentOf(root: Json, path: readonly string[]): Json | null {
  let node: Json = root;
  for (const step of path.slice(0, -1)) {
    const next = node[step];
    if (!isRecord(next)) return null;
    const copy = { ...next };
    node[step] = copy;
    node = copy;
  }
  return node;
}

/** Every (holder, field) of an event that is personal, with the subject whose key protects it. */
function personalSlots(type: string, data: Json): Array<{ holder: Json; field: string; subject: PersonalSubject }> {
  const slots: Array<{ holder: Json; field: string; subject: PersonalSubject }> = [];
  for (const rule of personalDataRules[type] ?? []) {
    const subject = rule.subject(data);
    if (!subject) continue;
    for (const path of rule.fields) {
      const steps = path.split('.');
      const holder = parentOf(data, steps);
      if (holder && typeof holder[steps.at(-1)!] === 'string') slots.push({ holder, field: steps.at(-1)!, subject });
    }
  }
  return slots;
}

/**
 * Personal data at the log's boundary (issue 25's crypto-shredding): the fields `personalDataRules` names,
 * and the client address and user agent of the metadata, are encrypted on append under their subject's
 * data key and decrypted on every read; a value whose key is gone reads as `ERASED`. Stream ids that would
 * spell an address are named by its keyed hash. Values stored before this existed (plaintext) read as they
 * are: only `pd1.` values are decrypted.
 */
export class PersonalData {
  constructor(
    readonly cipher: PersonalDataCipher,
    readonly keys: DataKeys,
  ) {}

  /** The id the log stores a stream under: an address's reservation or sign-in guard by its keyed hash. */
  storedStreamId(streamId: string): string {
    const spelled = addressInStreamId(streamId);
    return spelled ? `${spelled.prefix}hmac-${this.cipher.addressDigest(spelled.address)}` : streamId;
  }

  /** The event as the log stores it: its personal values encrypted (or the marker, for an erased user). */
  async encode(event: EventBody): Promise<EventBody> {
    if (!isRecord(event.data)) return event;
    const data = { ...event.data };
    const metadata: Json = { ...event.metadata };
    const slots = personalSlots(event.type, data);
    const metaSubject = metadataSubject(event.type, event.data, event.metadata);
    if (metaSubject) {
      for (const field of personalMetadataFields) {
        if (typeof metadata[field] === 'string') slots.push({ holder: metadata, field, subject: metaSubject });
      }
    }
    if (slots.length === 0) return event;
    const keys = new Map<string, Buffer | null>();
    for (const { subject } of slots) {
      const id = this.cipher.subjectId(subject);
      if (!keys.has(id)) keys.set(id, await this.keys.keyForWriting(id));
    }
    for (const { holder, field, subject } of slots) {
      const id = this.cipher.subjectId(subject);
      const key = keys.get(id) ?? null;
      // A user already erased gets no new key: what an append would say of them is erased as it is written.
      holder[field] = key ? this.cipher.encrypt(id, key, holder[field] as string) : ERASED;
    }
    return { type: event.type, data, metadata: metadata as EventMetadata };
  }

  /** The events as readers see them: every `pd1.` value of data and metadata opened, or `ERASED`. */
  async decode<E extends EventBody>(events: readonly E[]): Promise<E[]> {
    const wanted = new Set<string>();
    const slotsOf = events.map((event) => {
      if (!isRecord(event.data)) return null;
      const data = { ...event.data };
      const metadata: Json = { ...event.metadata };
      const slots: Array<{ holder: Json; field: string; subjectId: string }> = [];
      const consider = (holder: Json, field: string): void => {
        const value = holder[field];
        if (typeof value !== 'string') return;
        const subjectId = this.cipher.subjectOf(value);
        if (subjectId === null) return;
        slots.push({ holder, field, subjectId });
        wanted.add(subjectId);
      };
      for (const rule of personalDataRules[event.type] ?? []) {
        for (const path of rule.fields) {
          const steps = path.split('.');
          const holder = parentOf(data, steps);
          if (holder) consider(holder, steps.at(-1)!);
        }
      }
      for (const field of personalMetadataFields) consider(metadata, field);
      return slots.length === 0 ? null : { data, metadata, slots };
    });
    if (wanted.size === 0) return [...events];
    const keys = await this.keys.keysForReading([...wanted]);
    return events.map((event, index) => {
      const decoded = slotsOf[index];
      if (!decoded) return event;
      for (const { holder, field, subjectId } of decoded.slots) {
        const key = keys.get(subjectId) ?? null;
        holder[field] = (key && this.cipher.decrypt(holder[field] as string, key)) ?? ERASED;
      }
      return { ...event, data: decoded.data, metadata: decoded.metadata as EventMetadata };
    });
  }

  /** The key ids an appended event destroys (a user's deletion), read from its plaintext. */
  erasedBy(event: Pick<EventBody, 'type' | 'data'>): string[] {
    if (!isRecord(event.data)) return [];
    return erasedSubjects(event.type, event.data).map((subject) => this.cipher.subjectId(subject));
  }
}
