import * as nodeCrypto from 'node:crypto';
import { createCipheriv, createHash, createHmac, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import type { PersonalSubject } from '@portcullis/contracts';
import { openSealedBatch, SealedValueOpener } from './sealed-values.ts';
import { secretsOf, type SecretRing } from './secret-ring.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** A protected value as the log stores it: `pd1.<subject id>.<iv, ciphertext, tag>`, both parts base64url. */
const PREFIX = 'pd1.';

/** A data key sealed by a key-encryption key, and the id of the one that sealed it (stored beside it). */
export interface WrappedKey {
  readonly bytes: Buffer;
  readonly wrappedBy: string;
}

/**
 * Data keys wrapped by key-encryption keys, one derived from each secret of the ring with HKDF-SHA256: a
 * new key is wrapped by the newest, and a stored one is opened by the one its id names, so a rotation can
 * re-wrap every key under a new secret (`keys rotate`) while both are in the ring, and then drop the old.
 */
export interface KeyWrapping {
  /** The ids of the ring's key-encryption keys, newest first (a short hash of each key, not of the secret). */
  readonly wrappingKeyIds: readonly string[];
  newDataKey(): Buffer;
  wrap(subjectId: string, dataKey: Buffer): WrappedKey;
  /**
   * The data key, or null when the wrapped bytes are not this ring's for this subject. `wrappedBy` null (a
   * key stored before ids were recorded) tries every key of the ring, newest first.
   */
  unwrap(subjectId: string, wrapped: Buffer, wrappedBy: string | null): Buffer | null;
}

/**
 * The primitives of crypto-shredding, with nothing stored: a data key per subject (AES-256-GCM), wrapped as
 * `KeyWrapping` says, and a keyed hash (HMAC-SHA256) that names addresses without spelling them. Its key must
 * never change (stream ids are named by it), whatever secrets come and go: it is derived once from the
 * oldest secret and then kept in `data_key`, wrapped like a data key (see `PostgresDataKeys.addressNamingKey`).
 */
export interface PersonalDataCipher extends KeyWrapping {
  /** The keyed hash (hex) of an address as compared: lower-cased. */
  addressDigest(address: string): string;
  /** The id a subject's key is stored under: `u:<userId>` or `a:<keyed hash of the address>`. */
  subjectId(subject: PersonalSubject): string;
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

// Fixed HKDF inputs: changing one makes every stored key (or every keyed stream name) unreadable.
function hkdfKey(secret: string, salt: string, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), salt, info, KEY_BYTES));
}

export function createKeyWrapping(ring: SecretRing): KeyWrapping {
  const wrappingKeys = secretsOf(ring).map((secret) => {
    const key = hkdfKey(secret, 'portcullis/data-key', 'aes-256-gcm key-wrapping key v1');
    return { key, id: createHash('sha256').update('portcullis/key-wrapping-key-id\0').update(key).digest('hex').slice(0, 16) };
  });
  const byId = new Map(wrappingKeys.map((wrapping) => [wrapping.id, wrapping.key]));
  const newest = wrappingKeys[0]!;
  return {
    wrappingKeyIds: wrappingKeys.map((wrapping) => wrapping.id),
    newDataKey: () => randomBytes(KEY_BYTES),
    // The subject id is the associated data: a wrapped key copied to another subject's row does not open.
    wrap: (subjectId, dataKey) => ({ bytes: gcmSeal(newest.key, dataKey, subjectId), wrappedBy: newest.id }),
    unwrap(subjectId, wrapped, wrappedBy) {
      if (wrappedBy !== null) {
        const key = byId.get(wrappedBy);
        return key ? gcmOpen(key, wrapped, subjectId) : null;
      }
      for (const { key } of wrappingKeys) {
        const opened = gcmOpen(key, wrapped, subjectId);
        if (opened) return opened;
      }
      return null;
    },
  };
}

/**
 * The address-naming key as every version before the ring derived it, from the one secret it had: a ring's
 * oldest secret is that one when a deployment first runs with a ring.
 */
export function derivedAddressNamingKey(ring: SecretRing): Buffer {
  return hkdfKey(secretsOf(ring).at(-1)!, 'portcullis/address-name', 'hmac-sha256 key v1');
}

export function createPersonalDataCipher(ring: SecretRing, addressNamingKey: Buffer = derivedAddressNamingKey(ring)): PersonalDataCipher {
  // Memoised: a sign-in names its address's streams several times (read, kept, appended).
  const addressDigest = memo((address: string): string => createHmac('sha256', addressNamingKey).update(address.toLowerCase(), 'utf8').digest('hex'));
  const opener = new SealedValueOpener(nodeCrypto);
  const subjectOf = (value: string): string | null => {
    if (!value.startsWith(PREFIX)) return null;
    const end = value.indexOf('.', PREFIX.length);
    if (end < 0) return null;
    return decodedSubject(value.slice(PREFIX.length, end));
  };
  return {
    ...createKeyWrapping(ring),
    addressDigest,
    subjectId: (subject) => ('user' in subject ? `u:${subject.user}` : `a:${addressDigest(subject.address)}`),
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
