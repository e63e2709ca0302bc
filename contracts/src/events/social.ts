import { z } from 'zod';
import { defineEvent } from './define-event.ts';

/**
 * Stream `social-flow-<SHA-256 of the state>`: a provider sign-in or link under way (better-auth's flow state,
 * a verification value for 10 minutes). Nothing secret is kept: the state is known by its hash, and its
 * PKCE verifier and nonce are derived from the state with the server's secret when the provider comes back.
 */
export const SocialFlowStarted = defineEvent(
  'social.flow_started.v1',
  z.object({
    stateHash: z.string().regex(/^[0-9a-f]{64}$/),
    providerId: z.string(),
    callbackURL: z.string(),
    errorURL: z.string().nullable(),
    newUserURL: z.string().nullable(),
    requestSignUp: z.boolean(),
    /** A link-social flow: the signed-in user the provider's account is to join, and their email then. */
    linkUserId: z.string().nullable(),
    linkEmail: z.string().nullable(),
    expiresAt: z.string(),
  }),
);

/** The flow's state used (deleted on use): the same state brought again finds nothing. */
export const SocialFlowFinished = defineEvent('social.flow_finished.v1', z.object({ stateHash: z.string() }));
