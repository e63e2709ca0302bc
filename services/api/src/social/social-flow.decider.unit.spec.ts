import { describe, expect, it } from 'vitest';
import { SocialFlowFinished, SocialFlowStarted } from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import { decideStartFlow, decideUseFlow, evolveSocialFlow, socialFlowModel, type StartedFlow } from './social-flow.decider.ts';

const stateHash = 'a'.repeat(64);
const flow: StartedFlow = {
  providerId: 'github',
  callbackURL: '/dashboard',
  errorURL: null,
  newUserURL: '/welcome',
  requestSignUp: false,
  linkUserId: null,
  linkEmail: null,
  expiresAt: '2026-01-01T00:10:00.000Z',
};
const started = SocialFlowStarted({ stateHash, ...flow });
const use = deciderSpec({ evolve: evolveSocialFlow, initial: () => socialFlowModel.initial(), decide: decideUseFlow });

describe('a social flow by its state', () => {
  it('starts once', () => {
    expect(decideStartFlow({ stateHash, flow }, socialFlowModel.initial())).toEqual([started]);
    expect(() => decideStartFlow({ stateHash, flow }, evolveSocialFlow(socialFlowModel.initial(), started))).toThrow();
  });

  it('is used up by the provider coming back within its ten minutes', () => {
    use([started])
      .when({ stateHash, now: new Date('2026-01-01T00:09:59.000Z') })
      .then({ outcome: 'use', flow, events: [SocialFlowFinished({ stateHash })] });
  });

  it('asks for a restart when unknown, used already, or expired', () => {
    const now = new Date('2026-01-01T00:05:00.000Z');
    use([]).when({ stateHash, now }).then({ outcome: 'restart' });
    use([started, SocialFlowFinished({ stateHash })]).when({ stateHash, now }).then({ outcome: 'restart' });
    use([started]).when({ stateHash, now: new Date('2026-01-01T00:10:00.000Z') }).then({ outcome: 'restart' });
  });
});
