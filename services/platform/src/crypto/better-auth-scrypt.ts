import { scrypt, timingSafeEqual } from 'node:crypto';

/**
 * better-auth's password hash, as its `hashPassword` (better-auth/crypto, from @better-auth/utils/password,
 * 1.x) makes it: `<salt>:<key>`, where the salt is 16 random bytes written as 32 lowercase hex characters and
 * the key is scrypt(NFKC(password), salt, N=16384, r=16, p=1, dkLen=64) in lowercase hex. The salt goes into
 * scrypt as the hex string's bytes, not the bytes it spells. Accounts brought over from a better-auth
 * database keep this hash until their next sign-in, which replaces it with an argon2id one.
 */
export const BETTER_AUTH_SCRYPT = { N: 16_384, r: 16, p: 1, dkLen: 64 } as const;

/**
 * scrypt needs 128·N·r bytes (32 MiB here) and a little more, while node refuses anything above 32 MiB by
 * default; better-auth allows twice the need, and so do we.
 */
const MAXMEM = 128 * BETTER_AUTH_SCRYPT.N * BETTER_AUTH_SCRYPT.r * 2;

export interface BetterAuthScryptHash {
  /** As stored: scrypt takes its characters, not the bytes they spell. */
  readonly salt: string;
  readonly key: Buffer;
}

/**
 * better-auth writes 32 salt characters; any hex salt up to 128 is taken (better-auth would take any text), so
 * a hand-made but sound hash still verifies, and a hostile import cannot make a salt of any size. The key is
 * lowercase as better-auth writes it: it compares the hex text, so an uppercase key never matched there.
 */
const SCRYPT_HASH = /^([0-9a-fA-F]{16,128}):([0-9a-f]{128})$/;

/** The parts of a better-auth scrypt hash, or null for anything else (an argon2 hash, a malformed one). */
export function parseBetterAuthScryptHash(hash: string): BetterAuthScryptHash | null {
  const parts = SCRYPT_HASH.exec(hash);
  if (!parts) return null;
  return { salt: parts[1]!, key: Buffer.from(parts[2]!, 'hex') };
}

export function isBetterAuthScryptHash(hash: string): boolean {
  return SCRYPT_HASH.test(hash);
}

function scryptKey(password: string, salt: string): Promise<Buffer> {
  const { N, r, p, dkLen } = BETTER_AUTH_SCRYPT;
  return new Promise((resolve, reject) => {
    scrypt(password, salt, dkLen, { N, r, p, maxmem: MAXMEM }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/**
 * Whether `password` (already NFKC-normalized, as better-auth normalizes it) made `hash`. The keys are
 * compared in constant time, unlike better-auth's string comparison, so the time taken tells nothing about
 * how much of the key a guess got right.
 */
export async function verifyBetterAuthScrypt(hash: BetterAuthScryptHash, normalizedPassword: string): Promise<boolean> {
  const key = await scryptKey(normalizedPassword, hash.salt);
  return key.length === hash.key.length && timingSafeEqual(key, hash.key);
}
