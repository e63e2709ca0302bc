import { describe, expect, it } from 'vitest';
import { VerificationTokenConsumed, VerificationTokenIssued, VerificationTokenRevoked } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideVerificationToken, evolveVerificationToken, initialVerificationToken, usableBy } from './verification-token.decider.ts';

const given = deciderSpec({ evolve: evolveVerificationToken, initial: initialVerificationToken, decide: decideVerificationToken });
const tokenHash = 'c'.repeat(64);
const issued = VerificationTokenIssued({ purpose: 'reset-password', tokenHash, userId: 'u1', expiresAt: '2026-01-01T01:00:00.000Z' });
const consumed = VerificationTokenConsumed({ purpose: 'reset-password', tokenHash, userId: 'u1' });
const revoked = VerificationTokenRevoked({ purpose: 'reset-password', tokenHash, userId: 'u1', reason: 'superseded' });
const at = (iso: string): Date => new Date(iso);

describe('verification token decider', () => {
  it('issues a token once', () => {
    given([])
      .when({ type: 'issue', purpose: 'reset-password', tokenHash, userId: 'u1', expiresAt: at('2026-01-01T01:00:00.000Z') })
      .then([issued]);
    given([issued])
      .when({ type: 'issue', purpose: 'reset-password', tokenHash, userId: 'u1', expiresAt: at('2026-01-01T01:00:00.000Z') })
      .thenFails('FAILED_TO_CREATE_VERIFICATION');
  });

  it('consumes a live token once', () => {
    given([issued]).when({ type: 'consume', purpose: 'reset-password', now: at('2026-01-01T00:59:59.999Z') }).then([consumed]);
    given([issued, consumed]).when({ type: 'consume', purpose: 'reset-password', now: at('2026-01-01T00:30:00.000Z') }).thenFails('INVALID_TOKEN');
  });

  it('refuses an expired token, an unknown one, one for another purpose or another user', () => {
    given([issued]).when({ type: 'consume', purpose: 'reset-password', now: at('2026-01-01T01:00:00.000Z') }).thenFails('INVALID_TOKEN');
    given([]).when({ type: 'consume', purpose: 'reset-password', now: at('2026-01-01T00:00:00.000Z') }).thenFails('INVALID_TOKEN');
    given([issued]).when({ type: 'consume', purpose: 'delete-account', now: at('2026-01-01T00:00:00.000Z') }).thenFails('INVALID_TOKEN');
    given([issued]).when({ type: 'consume', purpose: 'reset-password', now: at('2026-01-01T00:00:00.000Z'), userId: 'u2' }).thenFails('INVALID_TOKEN');
  });

  it('revokes an issued token once a newer one replaces it, and leaves an ended one alone', () => {
    given([issued]).when({ type: 'revoke', reason: 'superseded' }).then([revoked]);
    given([issued, consumed]).when({ type: 'revoke', reason: 'superseded' }).then([]);
    given([issued, revoked]).when({ type: 'revoke', reason: 'superseded' }).then([]);
    given([]).when({ type: 'revoke', reason: 'superseded' }).then([]);
    given([issued, revoked]).when({ type: 'consume', purpose: 'reset-password', now: at('2026-01-01T00:30:00.000Z') }).thenFails('INVALID_TOKEN');
  });

  it('tells who a token is good for right now', () => {
    const state = [issued].reduce(evolveVerificationToken, initialVerificationToken());
    expect(usableBy(state, 'reset-password', at('2026-01-01T00:00:00.000Z'))).toBe('u1');
    expect(usableBy(state, 'reset-password', at('2026-01-01T02:00:00.000Z'))).toBeNull();
    expect(usableBy([issued, consumed].reduce(evolveVerificationToken, initialVerificationToken()), 'reset-password', at('2026-01-01T00:00:00.000Z'))).toBeNull();
    expect(usableBy([issued, revoked].reduce(evolveVerificationToken, initialVerificationToken()), 'reset-password', at('2026-01-01T00:00:00.000Z'))).toBeNull();
  });
});
