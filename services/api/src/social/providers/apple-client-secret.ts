import { importPKCS8, SignJWT } from 'jose';

/**
 * Apple's client secret is not a fixed string but a JWT the developer signs (ES256) with a Sign in with
 * Apple key: issued by the team, about the client (services) id, for Apple.
 * https://developer.apple.com/documentation/accountorganizationaldatasharing/creating-a-client-secret
 */
export interface AppleSigningKey {
  readonly teamId: string;
  readonly keyId: string;
  /** PKCS#8 PEM (the .p8 file). */
  readonly privateKey: string;
  readonly clientId: string;
  /** Apple's issuer, `https://appleid.apple.com`. */
  readonly audience: string;
}

/** Apple accepts up to six months; a day keeps a leaked secret short-lived, and signing daily costs nothing. */
const LIFETIME_SECONDS = 86_400;
/** Renewed this long before it expires, so none is sent that lapses on the way. */
const RENEW_BEFORE_SECONDS = 3_600;

/** A secret for each use, signed again once the last is near its end. */
export function appleClientSecret(signing: AppleSigningKey): () => Promise<string> {
  let key: ReturnType<typeof importPKCS8> | null = null;
  let current: { readonly value: string; readonly renewAt: number } | null = null;
  return async () => {
    const now = Math.floor(Date.now() / 1000);
    if (current !== null && now < current.renewAt) return current.value;
    key ??= importPKCS8(signing.privateKey, 'ES256');
    const value = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: signing.keyId })
      .setIssuer(signing.teamId)
      .setSubject(signing.clientId)
      .setAudience(signing.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + LIFETIME_SECONDS)
      .sign(await key);
    current = { value, renewAt: now + LIFETIME_SECONDS - RENEW_BEFORE_SECONDS };
    return value;
  };
}
