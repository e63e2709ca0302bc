import {
  addressInStreamId,
  ERASED,
  erasedSubjects,
  metadataSubject,
  personalDataRules,
  personalMetadataFields,
  type EventMetadata,
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

/**
 * Told of each personal value an encode sealed or a decode opened: the event's index among those given,
 * the plaintext, and the id of the key it is sealed under (what a snapshot of a fold of those events must
 * seal again: see `SnapshotSealing`).
 */
export type PersonalValueNote = (eventIndex: number, plaintext: string, subjectId: string) => void;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where one personal value of an event sits: a dotted path in its data, or a field of its metadata. */
interface Slot {
  readonly part: 'data' | 'metadata';
  readonly steps: readonly string[];
  readonly value: string;
  readonly subjectId: string;
}

function valueAt(root: Json, steps: readonly string[]): unknown {
  let node: unknown = root;
  for (const step of steps) {
    if (!isRecord(node)) return undefined;
    node = node[step];
  }
  return node;
}

/**
 * A copy of `root` with values put at paths, each record on the way copied once (two fields of one nested
 * record land in the same copy), the caller's object untouched.
 */
function withValues(root: Json, changes: ReadonlyArray<readonly [readonly string[], string]>): Json {
  // Top-level fields alone (the metadata's, most data's): one copy, no bookkeeping.
  if (changes.every(([steps]) => steps.length === 1)) {
    const copy = { ...root };
    for (const [steps, value] of changes) copy[steps[0]!] = value;
    return copy;
  }
  const copies = new Map<Json, Json>();
  const copyOf = (record: Json): Json => {
    let copy = copies.get(record);
    if (!copy) copies.set(record, (copy = { ...record }));
    return copy;
  };
  const result = copyOf(root);
  for (const [steps, value] of changes) {
    let original = root;
    let copy = result;
    for (const step of steps.slice(0, -1)) {
      const next = original[step] as Json;
      copy[step] = copyOf(next);
      copy = copy[step] as Json;
      original = next;
    }
    copy[steps.at(-1)!] = value;
  }
  return result;
}

/** The event with each slot's value replaced by `valueOf(slot)`; the event itself when it has none. */
function rewritten<E extends EventBody>(event: E, slots: readonly Slot[], valueOf: (slot: Slot) => string): E {
  if (slots.length === 0) return event;
  const inData: Array<readonly [readonly string[], string]> = [];
  const inMetadata: Array<readonly [readonly string[], string]> = [];
  for (const slot of slots) (slot.part === 'data' ? inData : inMetadata).push([slot.steps, valueOf(slot)]);
  return {
    ...event,
    data: inData.length > 0 ? withValues(event.data as Json, inData) : event.data,
    metadata: inMetadata.length > 0 ? (withValues(event.metadata, inMetadata) as EventMetadata) : event.metadata,
  };
}

/** Each rule's dotted paths split once, by event type: reads split no path per event. */
const splitRules = new Map<string, ReadonlyArray<readonly string[]>>();
function personalPathsOf(type: string): ReadonlyArray<readonly string[]> {
  let paths = splitRules.get(type);
  if (!paths) splitRules.set(type, (paths = (personalDataRules[type] ?? []).flatMap((rule) => rule.fields.map((path) => path.split('.')))));
  return paths;
}
const metadataPaths = personalMetadataFields.map((field) => [field] as const);

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
    return (await this.encodeAll([event]))[0]!;
  }

  /** The events of an append as the log stores them, with the keys of all their subjects asked for at once. */
  async encodeAll<E extends EventBody>(events: readonly E[], note?: PersonalValueNote): Promise<E[]> {
    const slotsOf = events.map((event) => {
      if (!isRecord(event.data)) return [];
      const data = event.data;
      const slots: Slot[] = [];
      for (const rule of personalDataRules[event.type] ?? []) {
        const subject = rule.subject(data);
        if (!subject) continue;
        // An address's id is a keyed hash: made once per rule, not once per field.
        const subjectId = this.cipher.subjectId(subject);
        for (const path of rule.fields) {
          const steps = path.split('.');
          const value = valueAt(data, steps);
          if (typeof value === 'string') slots.push({ part: 'data', steps, value, subjectId });
        }
      }
      const metaSubject = metadataSubject(event.type, data, event.metadata);
      if (metaSubject) {
        const subjectId = this.cipher.subjectId(metaSubject);
        for (const field of personalMetadataFields) {
          const value = event.metadata[field];
          if (typeof value === 'string') slots.push({ part: 'metadata', steps: [field], value, subjectId });
        }
      }
      return slots;
    });
    const wanted = slotsOf.flat().map((slot) => slot.subjectId);
    if (wanted.length === 0) return [...events];
    const keys = await this.keys.keysForWriting(wanted);
    // A value sealed once for the whole append: its events carry the request's address and agent, in their
    // metadata and often in their data too. The copies then read as equal, which they are known to be (one
    // request's), and a reader opens one value for all of them.
    const sealedOf = new Map<string, string>();
    return events.map((event, index) =>
      rewritten(event, slotsOf[index]!, ({ subjectId, value }) => {
        const key = keys.get(subjectId) ?? null;
        // A user already erased gets no new key: what an append would say of them is erased as it is written.
        if (!key) return ERASED;
        note?.(index, value, subjectId);
        const known = `${subjectId}\u0000${value}`;
        let sealed = sealedOf.get(known);
        if (sealed === undefined) sealedOf.set(known, (sealed = this.cipher.encrypt(subjectId, key, value)));
        return sealed;
      }),
    );
  }

  /**
   * The events as readers see them: every `pd1.` value of data and metadata opened, or `ERASED`. Only the
   * values an event was read with are opened: a reader that asked for few fields (see `EventFields`) pays
   * for those alone (opening is most of what a replay of the whole log costs).
   */
  async decode<E extends EventBody>(events: readonly E[], note?: PersonalValueNote): Promise<E[]> {
    const wanted = new Set<string>();
    const slotsOf: Slot[][] = [];
    for (const event of events) {
      const slots: Slot[] = [];
      slotsOf.push(slots);
      if (!isRecord(event.data)) continue;
      for (const steps of personalPathsOf(event.type)) this.consider(slots, 'data', event.data, steps);
      for (const steps of metadataPaths) this.consider(slots, 'metadata', event.metadata, steps);
      for (const slot of slots) wanted.add(slot.subjectId);
    }
    if (wanted.size === 0) return [...events];
    const keys = await this.keys.keysForReading([...wanted]);
    // Every value with a key, opened in one batch (on a worker thread when there are many); the rest erased.
    const sealed: string[] = [];
    const keyOfValue: Buffer[] = [];
    for (const slots of slotsOf) {
      for (const { subjectId, value } of slots) {
        const key = keys.get(subjectId);
        if (!key) continue;
        sealed.push(value);
        keyOfValue.push(key);
      }
    }
    const opened = await this.cipher.decryptAll(sealed, keyOfValue);
    let next = 0;
    return events.map((event, index) =>
      rewritten(event, slotsOf[index]!, ({ subjectId }) => {
        const plaintext = keys.get(subjectId) ? opened[next++] : null;
        if (plaintext === null || plaintext === undefined) return ERASED;
        note?.(index, plaintext, subjectId);
        return plaintext;
      }),
    );
  }

  /** Adds to `slots` the value at `steps` of `root` when it is one this cipher sealed. */
  private consider(slots: Slot[], part: Slot['part'], root: Json, steps: readonly string[]): void {
    const value = steps.length === 1 ? root[steps[0]!] : valueAt(root, steps);
    if (typeof value !== 'string') return;
    const subjectId = this.cipher.subjectOf(value);
    if (subjectId !== null) slots.push({ part, steps, value, subjectId });
  }

  /** The key ids an appended event destroys (a user's deletion), read from its plaintext. */
  erasedBy(event: Pick<EventBody, 'type' | 'data'>): string[] {
    if (!isRecord(event.data)) return [];
    return erasedSubjects(event.type, event.data).map((subject) => this.cipher.subjectId(subject));
  }
}
