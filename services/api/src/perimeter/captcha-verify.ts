import { z } from 'zod';
import type { CaptchaProvider, Config } from '@portcullis/platform';

export type CaptchaSettings = NonNullable<Config['captcha']>;

/** The vendors' siteverify endpoints (better-auth's captcha plugin, constants.ts). */
const siteVerifyUrls: Readonly<Record<CaptchaProvider, string>> = {
  'cloudflare-turnstile': 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  'google-recaptcha': 'https://www.google.com/recaptcha/api/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
};

/** What the three vendors answer, as far as the decision needs it; anything else is ignored. */
const siteVerifyAnswerSchema = z.object({
  success: z.boolean(),
  /** reCAPTCHA v3 only: 1.0 very likely a person, 0.0 very likely a bot. */
  score: z.number().optional(),
  'error-codes': z.array(z.string()).optional(),
});
export type SiteVerifyAnswer = z.infer<typeof siteVerifyAnswerSchema>;

/**
 * Asks the vendor about a token. Turnstile takes JSON, reCAPTCHA and hCaptcha a form, as better-auth sends
 * them. Throws when the vendor cannot be reached, answers with an error status or with something that is not
 * a verdict, or takes longer than the time-out (the request is then abandoned, not awaited).
 */
export async function siteVerify(settings: CaptchaSettings, token: string, remoteIp: string | undefined): Promise<SiteVerifyAnswer> {
  const fields: Record<string, string> = { secret: settings.secretKey, response: token };
  if (remoteIp) fields.remoteip = remoteIp;
  if (settings.provider === 'hcaptcha' && settings.siteKey) fields.sitekey = settings.siteKey;
  const json = settings.provider === 'cloudflare-turnstile';
  const response = await fetch(settings.verifyUrlOverride ?? siteVerifyUrls[settings.provider], {
    method: 'POST',
    headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
    body: json ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
    signal: AbortSignal.timeout(settings.timeoutMs),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`siteverify answered ${response.status}`);
  }
  return siteVerifyAnswerSchema.parse(await response.json());
}

export type CaptchaVerdict = { readonly passed: true } | { readonly passed: false; readonly reason: string };

/** better-auth's rule: the vendor's `success`, and for reCAPTCHA v3 (an answer with a score) the minimum score. */
export function captchaVerdict(settings: Pick<CaptchaSettings, 'provider' | 'minScore'>, answer: SiteVerifyAnswer): CaptchaVerdict {
  if (!answer.success) return { passed: false, reason: `rejected (${(answer['error-codes'] ?? []).join(', ') || 'no error codes'})` };
  if (settings.provider === 'google-recaptcha' && answer.score !== undefined && answer.score < settings.minScore) {
    return { passed: false, reason: `score ${answer.score} below ${settings.minScore}` };
  }
  return { passed: true };
}
