import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import type { PersonalSubject } from '@portcullis/contracts';

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
  /** The plaintext, or null when the value does not open with this key (another key, or altered). */
  decrypt(value: string, dataKey: Buffer): string | null;
}

/**
 * Opening a value is most of what reading the log costs once personal data is encrypted (a replay opens
 * one or more per event): the key objects and the subjects' bytes are made once per key and per subject,
 * not once per value.
 */
const keyObjects = new WeakMap<Buffer, KeyObject>();
function keyObjectOf(key: Buffer): KeyObject {
  let keyObject = keyObjects.get(key);
  if (!keyObject) keyObjects.set(key, (keyObject = createSecretKey(key)));
  return keyObject;
}

/** A small memo of recent strings' derived values (subject ids by their encoded form, and their bytes). */
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

function gcmOpen(key: Buffer, sealed: Buffer, associatedData: string): Buffer | null {
  if (sealed.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyObjectOf(key), sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(bytesOf(associatedData));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const opened = decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES));
    // GCM yields everything from update; final only checks the tag (and throws when it does not hold).
    decipher.final();
    return opened;
  } catch {
    return null;
  }
}

export function createPersonalDataCipher(secret: string): PersonalDataCipher {
  const ikm = Buffer.from(secret, 'utf8');
  // Fixed HKDF inputs: changing one makes every stored key (or every keyed stream name) unreadable.
  const wrappingKey = Buffer.from(hkdfSync('sha256', ikm, 'portcullis/data-key', 'aes-256-gcm key-wrapping key v1', KEY_BYTES));
  const namingKey = Buffer.from(hkdfSync('sha256', ikm, 'portcullis/address-name', 'hmac-sha256 key v1', KEY_BYTES));
  const addressDigest = (address: string): string => createHmac('sha256', namingKey).update(address.toLowerCase(), 'utf8').digest('hex');
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
    decrypt(value, dataKey) {
      const subjectId = subjectOf(value);
      if (subjectId === null) return null;
      const sealed = Buffer.from(value.slice(value.lastIndexOf('.') + 1), 'base64url');
      return gcmOpen(dataKey, sealed, subjectId)?.toString('utf8') ?? null;
    },
  };
}
