import argon2 from 'argon2';
import { describe, expect, it } from 'vitest';
import { hashPassword as betterAuthHash } from 'better-auth/crypto';
import { ARGON2ID_PARAMETERS, DEFAULT_ARGON2ID_COST, hashPassword, passwordHashIsCurrent, passwordLength, verifyPassword } from './password.ts';

describe('passwords: NFKC before hashing and verifying', () => {
  it('makes one password of the ways one text can be typed', async () => {
    const hash = await hashPassword('ﬁne Ｐａｓｓ café', DEFAULT_ARGON2ID_COST);
    for (const typed of ['ﬁne Ｐａｓｓ café', 'fine Pass café', 'fine Pass cafe\u0301']) expect(await verifyPassword(hash, typed), typed).toBe(true);
    expect(await verifyPassword(hash, 'fine pass café')).toBe(false);
  });

  it('still verifies a hash made before passwords were normalized, with the password as it was typed only', async () => {
    const typed = 'ﬁne Ｐａｓｓ café';
    // What hashPassword stored before: argon2id over the text as sent.
    const legacy = await argon2.hash(typed, ARGON2ID_PARAMETERS);
    expect(await verifyPassword(legacy, typed)).toBe(true);
    expect(await verifyPassword(legacy, 'fine Pass café')).toBe(false);
    // A password normalizing does not change is tried once, as it always was.
    const ascii = await argon2.hash('plain ascii', ARGON2ID_PARAMETERS);
    expect(await verifyPassword(ascii, 'plain ascii')).toBe(true);
  });

  it('counts length in code points of the normalized form', () => {
    expect(passwordLength('😀'.repeat(8))).toBe(8);
    expect(passwordLength('e\u0301')).toBe(1);
    expect(passwordLength('ﬁ')).toBe(2);
    expect(passwordLength('abc')).toBe(3);
  });
});

describe('passwords: the cost of new hashes', () => {
  const higher = { memoryKiB: 24_576, iterations: 3, parallelism: 2 };

  it('makes argon2id hashes at the cost it is given, which verify', async () => {
    const hash = await hashPassword('a fine password', higher);
    expect(passwordHashIsCurrent(hash, higher)).toBe(true);
    expect(await verifyPassword(hash, 'a fine password')).toBe(true);
  });

  it('calls a hash current only when it is argon2id at exactly that cost', async () => {
    const today = await hashPassword('pw', DEFAULT_ARGON2ID_COST);
    expect(passwordHashIsCurrent(today, DEFAULT_ARGON2ID_COST)).toBe(true);
    expect(passwordHashIsCurrent(today, higher)).toBe(false);
    for (const cost of [{ ...DEFAULT_ARGON2ID_COST, memoryKiB: 19_457 }, { ...DEFAULT_ARGON2ID_COST, iterations: 3 }, { ...DEFAULT_ARGON2ID_COST, parallelism: 2 }]) {
      expect(passwordHashIsCurrent(today, cost), JSON.stringify(cost)).toBe(false);
    }
    const argon2i = await argon2.hash('pw', { ...ARGON2ID_PARAMETERS, type: argon2.argon2i });
    expect(passwordHashIsCurrent(argon2i, DEFAULT_ARGON2ID_COST)).toBe(false);
    expect(passwordHashIsCurrent(await betterAuthHash('pw'), DEFAULT_ARGON2ID_COST)).toBe(false);
    expect(passwordHashIsCurrent('', DEFAULT_ARGON2ID_COST)).toBe(false);
    expect(passwordHashIsCurrent('$argon2id$v=16$m=19456,t=2,p=1$c2FsdA$aGFzaA', DEFAULT_ARGON2ID_COST)).toBe(false);
  });
});

describe('passwords: reading the cost of a stored hash', () => {
  it('reads the parameters in either order they are written', () => {
    const salted = '$c2FsdA$aGFzaA';
    expect(passwordHashIsCurrent(`$argon2id$v=19$m=19456,t=2,p=1${salted}`, DEFAULT_ARGON2ID_COST)).toBe(true);
    expect(passwordHashIsCurrent(`$argon2id$v=19$m=19456,p=1,t=2${salted}`, DEFAULT_ARGON2ID_COST)).toBe(true);
    expect(passwordHashIsCurrent(`$argon2id$v=19$m=19456,p=1${salted}`, DEFAULT_ARGON2ID_COST)).toBe(false);
    expect(passwordHashIsCurrent(`$argon2id$v=19$m=19456,t=2,p=1,x=0${salted}`, DEFAULT_ARGON2ID_COST)).toBe(false);
    expect(passwordHashIsCurrent(`$argon2id$v=19$m=019456,t=2,p=1${salted}`, DEFAULT_ARGON2ID_COST)).toBe(false);
  });
});
