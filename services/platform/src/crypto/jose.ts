import { errors, jwtVerify, SignJWT } from 'jose';
import { secretsOf, type SecretRing } from './secret-ring.ts';

/**
 * better-auth's email verification token: a JWT signed HS256 with the secret's UTF-8 bytes, carrying the
 * lower-cased email, and for a change of email the address to move to and the step it confirms.
 */
export interface EmailVerificationClaims {
  readonly email: string;
  readonly userId?: string;
  readonly updateTo?: string;
  readonly requestType?: 'change-email-confirmation' | 'change-email-verification';
}

export async function signEmailVerificationToken(
  claims: EmailVerificationClaims,
  ring: SecretRing,
  expiresInSeconds: number,
  now: Date,
): Promise<string> {
  const issuedAt = Math.floor(now.getTime() / 1000);
  return new SignJWT({
    email: claims.email.toLowerCase(),
    ...(claims.updateTo !== undefined ? { updateTo: claims.updateTo.toLowerCase() } : {}),
    ...(claims.requestType !== undefined ? { requestType: claims.requestType } : {}),
    ...(claims.userId !== undefined ? { userId: claims.userId } : {}),
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + expiresInSeconds)
    .sign(new TextEncoder().encode(secretsOf(ring)[0]));
}

export type VerifiedEmailToken =
  | { readonly ok: true; readonly claims: EmailVerificationClaims }
  | { readonly ok: false; readonly reason: 'expired' | 'invalid' };

/**
 * Checks signature (HS256 only, by any secret of the ring, newest first), expiry against `now`, and the
 * claims' shape. Never throws.
 */
export async function verifyEmailVerificationToken(token: string, ring: SecretRing, now: Date): Promise<VerifiedEmailToken> {
  let verdict: VerifiedEmailToken = { ok: false, reason: 'invalid' };
  for (const secret of secretsOf(ring)) {
    verdict = await verifyUnder(token, secret, now);
    // jose checks the signature before the expiry: an expired token was signed with this secret.
    if (verdict.ok || verdict.reason === 'expired') return verdict;
  }
  return verdict;
}

async function verifyUnder(token: string, secret: string, now: Date): Promise<VerifiedEmailToken> {
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ['HS256'], currentDate: now });
    const { email, userId, updateTo, requestType } = payload as Record<string, unknown>;
    if (typeof email !== 'string') return { ok: false, reason: 'invalid' };
    if (userId !== undefined && typeof userId !== 'string') return { ok: false, reason: 'invalid' };
    if (updateTo !== undefined && typeof updateTo !== 'string') return { ok: false, reason: 'invalid' };
    if (requestType !== undefined && requestType !== 'change-email-confirmation' && requestType !== 'change-email-verification') {
      return { ok: false, reason: 'invalid' };
    }
    return {
      ok: true,
      claims: {
        email,
        ...(userId !== undefined ? { userId } : {}),
        ...(updateTo !== undefined ? { updateTo } : {}),
        ...(requestType !== undefined ? { requestType } : {}),
      },
    };
  } catch (error) {
    return { ok: false, reason: error instanceof errors.JWTExpired ? 'expired' : 'invalid' };
  }
}
