import { createHmac } from 'node:crypto';
import { streams } from '@portcullis/contracts';
import { hashToken, randomString, type RequestMetadata } from '@portcullis/platform';
import type { SocialPorts } from './ports.ts';
import { decideStartFlow, decideUseFlow, socialFlowModel, type StartedFlow } from './social-flow.decider.ts';

/** better-auth's sizes (spec section 9): the state 32 characters, the PKCE verifier 128. */
const STATE_LENGTH = 32;
const CODE_VERIFIER_LENGTH = 128;
const NONCE_LENGTH = 32;
/** Spec sections 4 and 9: the flow state expires after 10 minutes. */
export const FLOW_LIFETIME_MS = 10 * 60 * 1000;

export interface FlowSecrets {
  readonly codeVerifier: string;
  readonly nonce: string;
}

/**
 * The flow's PKCE verifier and nonce, derived from its state with the server's newest secret: the same when
 * the provider comes back (derived again with the secret that signed the browser's state cookie, the one
 * newest when the flow began, which a rotation meanwhile has left in the ring), and never written anywhere
 * (the log keeps only the state's hash). base64url's alphabet is PKCE's unreserved characters.
 */
export function flowSecrets(secret: string, state: string): FlowSecrets {
  const derive = (purpose: string, length: number): string => {
    let out = '';
    for (let block = 0; out.length < length; block += 1) {
      out += createHmac('sha512', secret).update(`${purpose}\0${block}\0${state}`).digest('base64url');
    }
    return out.slice(0, length);
  };
  return { codeVerifier: derive('pkce-verifier', CODE_VERIFIER_LENGTH), nonce: derive('oidc-nonce', NONCE_LENGTH) };
}

/** A new flow: its state (for the provider and the browser's cookie) and its secrets. */
export async function startFlow(ctx: SocialPorts, request: RequestMetadata, flow: Omit<StartedFlow, 'expiresAt'>): Promise<{ state: string } & FlowSecrets> {
  const state = randomString(STATE_LENGTH);
  const stateHash = hashToken(state);
  await ctx.commands.handle({ name: 'social.start-flow', request, actorId: flow.linkUserId }, async (unit) => {
    const stream = await unit.load(streams.socialFlow(stateHash), socialFlowModel);
    const expiresAt = new Date(unit.now.getTime() + FLOW_LIFETIME_MS).toISOString();
    unit.append(stream.streamId, decideStartFlow({ stateHash, flow: { ...flow, expiresAt } }, stream.state));
  });
  return { state, ...flowSecrets(ctx.config.secret, state) };
}

/**
 * The flow the state names, used up now; null for a state unknown, used already or expired. `secret`: the
 * one that signed the state cookie the browser brought back.
 */
export async function useFlow(ctx: SocialPorts, request: RequestMetadata, state: string, secret: string): Promise<(StartedFlow & FlowSecrets) | null> {
  const stateHash = hashToken(state);
  const { result } = await ctx.commands.handle({ name: 'social.use-flow', request, actorId: null }, async (unit) => {
    const stream = await unit.load(streams.socialFlow(stateHash), socialFlowModel);
    const use = decideUseFlow({ stateHash, now: unit.now }, stream.state);
    if (use.outcome === 'restart') return null;
    unit.append(stream.streamId, use.events);
    return use.flow;
  });
  return result === null ? null : { ...result, ...flowSecrets(secret, state) };
}
