import { describe, it } from 'vitest';
import { PasswordResetLinkIssued } from '@portcullis/contracts';
import { deciderSpec, foldSpec } from '../decider-spec.test-support.ts';
import { decidePasswordResetLink, evolvePasswordReset, initialPasswordReset } from './password-reset.decider.ts';

const given = deciderSpec({ evolve: evolvePasswordReset, initial: initialPasswordReset, decide: decidePasswordResetLink });
const folded = foldSpec({ evolve: evolvePasswordReset, initial: initialPasswordReset });
/** A token hash: SHA-256 hex. */
const hash = (n: number): string => String(n).repeat(64).slice(0, 64);
const issued = (tokenHash: string, expiresAt: string) => PasswordResetLinkIssued({ userId: 'u1', tokenHash, expiresAt });

describe('password reset links decider', () => {
  it('issues a link that becomes the latest, whatever was issued before', () => {
    given([])
      .when({ userId: 'u1', tokenHash: hash(1), expiresAt: new Date('2026-01-01T01:00:00.000Z') })
      .then([issued(hash(1), '2026-01-01T01:00:00.000Z')]);
    given([issued(hash(1), '2026-01-01T01:00:00.000Z')])
      .when({ userId: 'u1', tokenHash: hash(2), expiresAt: new Date('2026-01-01T02:00:00.000Z') })
      .then([issued(hash(2), '2026-01-01T02:00:00.000Z')]);
  });

  it('holds the latest link only: the one a new request revokes', () => {
    folded([]).then({ latest: null });
    folded([issued(hash(1), '2026-01-01T01:00:00.000Z'), issued(hash(2), '2026-01-01T02:00:00.000Z')]).then({
      latest: { tokenHash: hash(2), expiresAt: '2026-01-01T02:00:00.000Z' },
    });
  });
});
