import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

// RFC 8410's PKCS#8 wrapping of a bare 32-byte Ed25519 seed: the fixed DER prefix, then the seed.
const PKCS8_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * An Ed25519 private key from configuration: a PKCS#8 PEM, or the 32-byte seed in base64 or hex (what
 * `openssl rand -base64 32` prints). Throws a message that never contains the key.
 */
export function parseEd25519PrivateKey(value: string): KeyObject {
  const text = value.trim();
  if (text.startsWith('-----BEGIN')) {
    const key = createPrivateKey(text.replace(/\\n/g, '\n'));
    if (key.asymmetricKeyType !== 'ed25519') throw new Error('is not an Ed25519 key');
    return key;
  }
  const seed = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (seed.length !== 32) throw new Error('must be an Ed25519 PKCS#8 PEM or a 32-byte seed in base64 or hex');
  return createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The public half, as SPKI PEM: what a verifier is given to check signatures without the secret. */
export function ed25519PublicKeyPem(privateKey: KeyObject): string {
  return createPublicKey(privateKey).export({ format: 'pem', type: 'spki' }).toString();
}

export function ed25519Sign(privateKey: KeyObject, message: Buffer): string {
  return sign(null, message, privateKey).toString('base64');
}

export function ed25519Verify(publicKeyPem: string, message: Buffer, signature: string): boolean {
  try {
    return verify(null, message, createPublicKey(publicKeyPem), Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
