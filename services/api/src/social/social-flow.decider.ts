import { SocialFlowFinished, SocialFlowStarted, streamModel, type DomainEvent, type EventData } from '@portcullis/contracts';

export type StartedFlow = Omit<EventData<'social.flow_started.v1'>, 'stateHash'>;

/** A provider flow by its state: never started (or a state nobody issued), under way, or used. */
export type SocialFlowState =
  | { readonly status: 'unknown' }
  | { readonly status: 'started'; readonly flow: StartedFlow }
  | { readonly status: 'finished' };

export function evolveSocialFlow(state: SocialFlowState, event: DomainEvent): SocialFlowState {
  switch (event.type) {
    case 'social.flow_started.v1': {
      const { stateHash: _stateHash, ...flow } = event.data;
      return { status: 'started', flow };
    }
    case 'social.flow_finished.v1':
      return { status: 'finished' };
    default:
      return state;
  }
}

export function decideStartFlow(command: { readonly stateHash: string; readonly flow: StartedFlow }, state: SocialFlowState): DomainEvent[] {
  // A 32-character random state never repeats; one that did is refused rather than reused.
  if (state.status !== 'unknown') throw new Error('a social flow state was issued twice');
  return [SocialFlowStarted({ stateHash: command.stateHash, ...command.flow })];
}

/**
 * The provider came back with the state: the flow it started, used up by this (deleted on use, as better-auth
 * deletes its verification value); `restart` for a state unknown, used already or expired (spec section 2).
 */
export type FlowUse = { readonly outcome: 'use'; readonly flow: StartedFlow; readonly events: DomainEvent[] } | { readonly outcome: 'restart' };

export function decideUseFlow(command: { readonly stateHash: string; readonly now: Date }, state: SocialFlowState): FlowUse {
  if (state.status !== 'started') return { outcome: 'restart' };
  if (Date.parse(state.flow.expiresAt) <= command.now.getTime()) return { outcome: 'restart' };
  return { outcome: 'use', flow: state.flow, events: [SocialFlowFinished({ stateHash: command.stateHash })] };
}

export const socialFlowModel = streamModel('social-flow', 1, (): SocialFlowState => ({ status: 'unknown' }), evolveSocialFlow);
