import { hashPassword as betterAuthHash } from 'better-auth/crypto';
import { describe, expect, it } from 'vitest';
import { isBetterAuthScryptHash, parseBetterAuthScryptHash } from './better-auth-scrypt.ts';
import { verifyPassword } from './password.ts';

/** Made by better-auth 1.7.25's hashPassword from 'correct horse battery': stored hashes outlive upgrades of it. */
const FIXED =
  '069c62ec68ee142cf746f1c6275bf193:' +
  'cafefaffc40d1b7a21dd86d3f5f87762487e7628063f5a658cef3cc99710acc969397ecfa92aa41d271cb030d90608780ec0ffbe41211be67aa8ce5161dfb7c5';

describe('better-auth scrypt hashes', () => {
  it('verifies what better-auth hashPassword makes, and only for its password', async () => {
    const hash = await betterAuthHash('correct horse battery');
    expect(isBetterAuthScryptHash(hash)).toBe(true);
    expect(await verifyPassword(hash, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(hash, 'correct horse batterY')).toBe(false);
    expect(await verifyPassword(hash, '')).toBe(false);
  });

  it('verifies a hash better-auth 1.7 stored', async () => {
    expect(await verifyPassword(FIXED, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(FIXED, 'correct horse batter')).toBe(false);
  });

  it('normalizes the password as better-auth does (NFKC) before scrypt', async () => {
    const hash = await betterAuthHash('ﬁne Ｐａｓｓ café');
    for (const typed of ['ﬁne Ｐａｓｓ café', 'fine Pass café', 'fine Pass cafe\u0301']) expect(await verifyPassword(hash, typed), typed).toBe(true);
    expect(await verifyPassword(hash, 'fine pass café')).toBe(false);
  });

  it('reads the salt as the text it is and the key as 64 bytes', async () => {
    const hash = await betterAuthHash('pw');
    const [salt, key] = hash.split(':');
    expect(parseBetterAuthScryptHash(hash)).toEqual({ salt, key: Buffer.from(key!, 'hex') });
    expect(parseBetterAuthScryptHash(hash)!.key).toHaveLength(64);
  });

  it('refuses malformed hashes as matching nothing, without throwing', async () => {
    const good = await betterAuthHash('pw');
    const [salt, key] = good.split(':') as [string, string];
    const malformed = [
      '',
      ':',
      salt,
      `${salt}:`,
      `:${key}`,
      `${salt}:${key}:extra`,
      `${salt}:${key.slice(0, 126)}`,
      `${salt}:${key}00`,
      `${salt}:${key.toUpperCase()}`,
      `${salt}:${key.slice(0, 127)}g`,
      `salt-not-hex:${key}`,
      `${'ab'.repeat(65)}:${key}`,
      ` ${good}`,
      `${good}\n`,
      '$argon2id$v=19$m=19456,t=2,p=1$bm90IGEgaGFzaA',
      '$2b$10$abcdefghijklmnopqrstuu5Zx8.Ul6p7jX5S1KcO3U1bZr6z2Wf4i',
    ];
    for (const hash of malformed) {
      expect(parseBetterAuthScryptHash(hash), JSON.stringify(hash)).toBeNull();
      await expect(verifyPassword(hash, 'pw'), JSON.stringify(hash)).resolves.toBe(false);
    }
  });
});
