import { describe, expect, it } from 'vitest';
import { signEmailVerificationToken, verifyEmailVerificationToken } from './jose.ts';
import { createTokenSealer } from './sealed-token.ts';

const secret = 'a-secret-of-at-least-thirty-two-characters!';

describe('sealed tokens (AES-256-GCM, HKDF from AUTH_SECRET)', () => {
  it('opens what it sealed, for the same job only', () => {
    const sealer = createTokenSealer(secret);
    const sealed = sealer.seal('reset-token-abc', 'job-1');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('reset-token-abc');
    expect(sealer.open(sealed, 'job-1')).toBe('reset-token-abc');
    expect(() => sealer.open(sealed, 'job-2')).toThrow();
  });

  it('seals the same token differently each time, and only this secret opens it', () => {
    const sealer = createTokenSealer(secret);
    expect(sealer.seal('t', 'j')).not.toBe(sealer.seal('t', 'j'));
    expect(() => createTokenSealer(`${secret}-other`).open(sealer.seal('t', 'j'), 'j')).toThrow();
  });

  it('seals with the newest secret of a ring and opens under any of it, not once the sealing one is dropped', () => {
    const newest = `${secret}-newest`;
    const rotated = createTokenSealer([newest, secret]);
    const sealedBefore = createTokenSealer(secret).seal('queued-before-the-rotation', 'job-1');
    expect(rotated.open(sealedBefore, 'job-1')).toBe('queued-before-the-rotation');
    const sealedAfter = rotated.seal('queued-after', 'job-2');
    expect(createTokenSealer(newest).open(sealedAfter, 'job-2')).toBe('queued-after');
    expect(() => createTokenSealer(secret).open(sealedAfter, 'job-2')).toThrow();
    expect(() => createTokenSealer(newest).open(sealedBefore, 'job-1')).toThrow();
    expect(() => rotated.open(sealedBefore, 'job-2')).toThrow();
  });

  it('refuses a tampered ciphertext', () => {
    const sealer = createTokenSealer(secret);
    const [v, iv, data, tag] = sealer.seal('token', 'j').split('.');
    const flipped = Buffer.from(data!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => sealer.open([v, iv, flipped.toString('base64url'), tag].join('.'), 'j')).toThrow();
    expect(() => sealer.open('not sealed', 'j')).toThrow();
  });
});

describe('email verification tokens (HS256 JWT, as better-auth signs them)', () => {
  const now = new Date('2026-01-01T00:00:00.000Z');

  it('carries the lower-cased email and the user, and expires after its lifetime', async () => {
    const token = await signEmailVerificationToken({ email: 'Ada@Example.com', userId: 'u1' }, secret, 3600, now);
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg: string };
    expect(header.alg).toBe('HS256');
    expect(await verifyEmailVerificationToken(token, secret, new Date('2026-01-01T00:59:59.000Z'))).toEqual({
      ok: true,
      claims: { email: 'ada@example.com', userId: 'u1' },
    });
    expect(await verifyEmailVerificationToken(token, secret, new Date('2026-01-01T01:00:01.000Z'))).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses another secret, a tampered token and garbage as invalid', async () => {
    const token = await signEmailVerificationToken({ email: 'a@x.test', updateTo: 'B@x.test', requestType: 'change-email-confirmation', userId: 'u1' }, secret, 60, now);
    expect(await verifyEmailVerificationToken(token, secret, now)).toEqual({
      ok: true,
      claims: { email: 'a@x.test', updateTo: 'b@x.test', requestType: 'change-email-confirmation', userId: 'u1' },
    });
    expect(await verifyEmailVerificationToken(token, `${secret}x`, now)).toEqual({ ok: false, reason: 'invalid' });
    expect(await verifyEmailVerificationToken(`${token.slice(0, -2)}xx`, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    expect(await verifyEmailVerificationToken('garbage', secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('is signed with the newest secret of a ring and verified under any of it, its expiry too', async () => {
    const newest = `${secret}-newest`;
    const before = await signEmailVerificationToken({ email: 'a@x.test' }, secret, 60, now);
    const after = await signEmailVerificationToken({ email: 'a@x.test' }, [newest, secret], 60, now);
    expect(after).toBe(await signEmailVerificationToken({ email: 'a@x.test' }, newest, 60, now));
    expect(await verifyEmailVerificationToken(before, [newest, secret], now)).toEqual({ ok: true, claims: { email: 'a@x.test' } });
    expect(await verifyEmailVerificationToken(before, [newest, secret], new Date(now.getTime() + 61_000))).toEqual({ ok: false, reason: 'expired' });
    expect(await verifyEmailVerificationToken(before, [newest], now)).toEqual({ ok: false, reason: 'invalid' });
  });
});
