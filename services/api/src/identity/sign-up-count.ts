import { instruments } from '@portcullis/platform/telemetry/telemetry';

export const SIGN_UP_METRIC = 'portcullis.sign_ups';

const signUps = instruments((meter) => meter.createCounter(SIGN_UP_METRIC, { description: 'Users who signed themselves up, by method (email, social)' }));

/**
 * A user who signed themself up: counted where the registration is decided, once its command has landed
 * (not per attempt of a retried command), so a sign-up through a provider's callback counts as one through
 * the sign-up form does. Users an admin creates are not sign-ups.
 */
export function countSignUp(method: 'email' | 'social'): void {
  signUps().add(1, { method });
}
