import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { secretsOf, type SecretRing } from './secret-ring.ts';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// Fixed HKDF inputs: changing either makes every sealed token in flight unreadable.
const HKDF_SALT = 'portcullis/sealed-token';
const HKDF_INFO = 'aes-256-gcm key v1';

/**
 * Seals the raw tokens the mailer needs (reset and delete tokens, verification JWTs) for their trip through
 * the event log or Kafka: AES-256-GCM under a key derived from the ring's newest secret with HKDF-SHA256,
 * opened under any secret of the ring (a mail queued before a rotation still goes out after it). The job id
 * is the associated data, so a sealed token cannot be moved into another job. Readers of the log see only
 * `v1.<iv>.<ciphertext>.<tag>` (base64url).
 */
export interface TokenSealer {
  seal(token: string, associatedData: string): string;
  /** The token, or throws when the value was not sealed by a secret of the ring for this associated data. */
  open(sealed: string, associatedData: string): string;
}

export function createTokenSealer(ring: SecretRing): TokenSealer {
  const keys = secretsOf(ring).map((secret) => Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), HKDF_SALT, HKDF_INFO, 32)));
  const openWith = (key: Buffer, iv: string, ciphertext: string, tag: string, associatedData: string): string | null => {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  };
  return {
    seal(token, associatedData) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keys[0]!, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
      return [VERSION, iv, ciphertext, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
    },
    open(sealed, associatedData) {
      const [version, iv, ciphertext, tag, ...rest] = sealed.split('.');
      if (version !== VERSION || iv === undefined || ciphertext === undefined || tag === undefined || rest.length > 0) {
        throw new Error('not a sealed token');
      }
      // The value does not say which secret sealed it; GCM's tag tells a wrong key at once, newest first.
      for (const key of keys) {
        const token = openWith(key, iv, ciphertext, tag, associatedData);
        if (token !== null) return token;
      }
      throw new Error('the sealed token does not open under any secret of the ring');
    },
  };
}
