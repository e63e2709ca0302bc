import argon2 from 'argon2';
import { describe, expect, it } from 'vitest';
import { ARGON2ID_PARAMETERS, hashPassword, passwordLength, verifyPassword } from './password.ts';

describe('passwords: NFKC before hashing and verifying', () => {
  it('makes one password of the ways one text can be typed', async () => {
    const hash = await hashPassword('ﬁne Ｐａｓｓ café');
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
