import { describe, expect, it } from 'vitest';
import { DEFAULT_ARGON2ID_COST, hashPassword, passwordHashIsCurrent, passwordWorkUnderWay, verifyPassword } from '@portcullis/platform';
import { passwordCheck } from './password-policy.ts';

const PASSWORD = 'correct horse battery';
/** better-auth 1.7.25's hashPassword(PASSWORD). */
const SCRYPT =
  '069c62ec68ee142cf746f1c6275bf193:cafefaffc40d1b7a21dd86d3f5f87762487e7628063f5a658cef3cc99710acc969397ecfa92aa41d271cb030d90608780ec0ffbe41211be67aa8ce5161dfb7c5';

describe('a presented password: rehashing what it matched', () => {
  it('spends nothing on a hash that is current: no hashing is even queued', async () => {
    const current = await hashPassword(PASSWORD, DEFAULT_ARGON2ID_COST);
    const check = passwordCheck(PASSWORD, DEFAULT_ARGON2ID_COST);
    const rehash = check.rehash(current);
    expect(passwordWorkUnderWay()).toBe(0);
    expect(await rehash).toBeNull();
  });

  it('makes one argon2id hash at the cost for a scrypt or older-cost hash, once per hash', async () => {
    const higher = { memoryKiB: 24_576, iterations: 3, parallelism: 1 };
    const check = passwordCheck(PASSWORD, higher);
    for (const dated of [SCRYPT, await hashPassword(PASSWORD, DEFAULT_ARGON2ID_COST)]) {
      const replacement = await check.rehash(dated);
      expect(replacement).not.toBeNull();
      expect(passwordHashIsCurrent(replacement!, higher)).toBe(true);
      expect(await verifyPassword(replacement!, PASSWORD)).toBe(true);
      // A command decided again on the same hash gets the same replacement, not a second argon2 run.
      expect(await check.rehash(dated)).toBe(replacement);
    }
  });
});
