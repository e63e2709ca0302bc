import * as nodeCrypto from 'node:crypto';
import { createCipheriv, createHmac, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import type { PersonalSubject } from '@portcullis/contracts';
import { openSealedBatch, SealedValueOpener } from './sealed-values.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** A protected value as the log stores it: `pd1.<subject id>.<iv, ciphertext, tag>`, both parts base64url. */
const PREFIX = 'pd1.';

/**
 * The primitives of crypto-shredding, with nothing stored: a data key per subject (AES-256-GCM), wrapped by
 * a key-encryption key derived from AUTH_SECRET with HKDF-SHA256, and a keyed hash (HMAC-SHA256, its own
 * HKDF-derived key) that names addresses without spelling them. Changing AUTH_SECRET makes every wrapped
 * key unreadable, as it already makes every sealed token: the personal data then reads as erased.
 */
export interface PersonalDataCipher {
  /** The keyed hash (hex) of an address as compared: lower-cased. */
  addressDigest(address: string): string;
  /** The id a subject's key is stored under: `u:<userId>` or `a:<keyed hash of the address>`. */
  subjectId(subject: PersonalSubject): string;
  newDataKey(): Buffer;
  wrap(subjectId: string, dataKey: Buffer): Buffer;
  /** The data key, or null when the wrapped bytes are not this secret's for this subject. */
  unwrap(subjectId: string, wrapped: Buffer): Buffer | null;
  /** The subject id bound into the value, for a value this cipher produced; null for anything else (plaintext). */
  subjectOf(value: string): string | null;
  encrypt(subjectId: string, dataKey: Buffer, plaintext: string): string;
  /**
   * Each value's plaintext, opened with the key beside it, or null where it does not open (another key,
   * altered, not a value of this cipher's); a batch this large (a replay's) is opened on a worker thread,
   * beside the thread that reads and writes.
   */
  decryptAll(values: readonly string[], dataKeys: readonly Buffer[]): Promise<Array<string | null>>;
  /** Stops the worker thread, if one was started. */
  close(): Promise<void>;
}

/** Fewer values than this are opened in place: a worker's round trip would cost more than it saves. */
const WORKER_BATCH = 512;

/**
 * Key objects made once per key, not once per value sealed or opened (a replay opens one or more values
 * per event; an append seals a few).
 */
const keyObjects = new WeakMap<Buffer, KeyObject>();
function keyObjectOf(key: Buffer): KeyObject {
  let keyObject = keyObjects.get(key);
  if (!keyObject) keyObjects.set(key, (keyObject = createSecretKey(key)));
  return keyObject;
}

/** A small memo of recent strings' derived values (subject ids by their encoded form, and the bytes sealing binds). */
function memo<T>(derive: (text: string) => T, capacity = 4096): (text: string) => T {
  const kept = new Map<string, T>();
  return (text) => {
    let value = kept.get(text);
    if (value === undefined) {
      if (kept.size >= capacity) kept.clear();
      kept.set(text, (value = derive(text)));
    }
    return value;
  };
}
const bytesOf = memo((text) => Buffer.from(text, 'utf8'));
const decodedSubject = memo((encoded) => Buffer.from(encoded, 'base64url').toString('utf8'));

function gcmSeal(key: Buffer, plaintext: Buffer, associatedData: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyObjectOf(key), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(bytesOf(associatedData));
  return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function gcmOpen(key: Buffer, sealed: Uint8Array, associatedData: string): Buffer | null {
  return openSealedBatch(nodeCrypto, { keys: [keyObjectOf(key)], sealed: [sealed], associatedData: [associatedData], keyOf: [0] }, 'bytes')[0] as Buffer | null;
}

/** The sealed part of a protected value (its base64url), after the prefix and the subject id. */
function sealedPart(value: string): string {
  return value.slice(value.lastIndexOf('.') + 1);
}

export function createPersonalDataCipher(secret: string): PersonalDataCipher {
  const ikm = Buffer.from(secret, 'utf8');
  // Fixed HKDF inputs: changing one makes every stored key (or every keyed stream name) unreadable.
  const wrappingKey = Buffer.from(hkdfSync('sha256', ikm, 'portcullis/data-key', 'aes-256-gcm key-wrapping key v1', KEY_BYTES));
  const namingKey = Buffer.from(hkdfSync('sha256', ikm, 'portcullis/address-name', 'hmac-sha256 key v1', KEY_BYTES));
  // Memoised: a sign-in names its address's streams several times (read, kept, appended).
  const addressDigest = memo((address: string): string => createHmac('sha256', namingKey).update(address.toLowerCase(), 'utf8').digest('hex'));
  const opener = new SealedValueOpener(nodeCrypto);
  const subjectOf = (value: string): string | null => {
    if (!value.startsWith(PREFIX)) return null;
    const end = value.indexOf('.', PREFIX.length);
    if (end < 0) return null;
    return decodedSubject(value.slice(PREFIX.length, end));
  };
  return {
    addressDigest,
    subjectId: (subject) => ('user' in subject ? `u:${subject.user}` : `a:${addressDigest(subject.address)}`),
    newDataKey: () => randomBytes(KEY_BYTES),
    // The subject id is the associated data: a wrapped key copied to another subject's row does not open.
    wrap: (subjectId, dataKey) => gcmSeal(wrappingKey, dataKey, subjectId),
    unwrap: (subjectId, wrapped) => gcmOpen(wrappingKey, wrapped, subjectId),
    subjectOf,
    encrypt(subjectId, dataKey, plaintext) {
      // Bound to its subject, so a value cannot be moved under another subject's key unnoticed.
      const sealed = gcmSeal(dataKey, Buffer.from(plaintext, 'utf8'), subjectId);
      return `${PREFIX}${Buffer.from(subjectId, 'utf8').toString('base64url')}.${sealed.toString('base64url')}`;
    },
    async decryptAll(values, dataKeys) {
      const keyIndex = new Map<Buffer, number>();
      const keyOf: number[] = [];
      const sealed: string[] = [];
      const associatedData: string[] = [];
      // Where each value's plaintext is among those sent; -1 for a value that is not one of ours (it does
      // not open). A value met again (an append seals a request's address once for all its events) is sent
      // once: the same sealed text under the same key opens to the same plaintext.
      const sentAt = new Array<number>(values.length).fill(-1);
      const sentOf = new Map<string, number>();
      values.forEach((value, index) => {
        const subjectId = subjectOf(value);
        if (subjectId === null) return;
        const key = dataKeys[index]!;
        let slot = keyIndex.get(key);
        if (slot === undefined) keyIndex.set(key, (slot = keyIndex.size));
        const seen = sentOf.get(value);
        if (seen !== undefined && keyOf[seen] === slot) {
          sentAt[index] = seen;
          return;
        }
        sentOf.set(value, (sentAt[index] = sealed.length));
        keyOf.push(slot);
        sealed.push(sealedPart(value));
        associatedData.push(subjectId);
      });
      const keys = [...keyIndex.keys()];
      const opened =
        sealed.length < WORKER_BATCH
          ? (openSealedBatch(nodeCrypto, { keys: keys.map(keyObjectOf), sealed, associatedData, keyOf }, 'text') as Array<string | null>)
          : await opener.open({ keys: sharingOneBuffer(keys), sealed, associatedData, keyOf });
      return sentAt.map((at) => (at < 0 ? null : opened[at]!));
    },
    close: () => opener.close(),
  };
}

/** Views of one buffer holding every key: posted to a worker, the keys are then one copy, not one each. */
function sharingOneBuffer(keys: readonly Buffer[]): Uint8Array[] {
  const all = Buffer.alloc(keys.reduce((sum, key) => sum + key.length, 0));
  let at = 0;
  return keys.map((key) => {
    key.copy(all, at);
    at += key.length;
    return all.subarray(at - key.length, at);
  });
}
