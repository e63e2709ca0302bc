import { describe, expect, it } from 'vitest';
import { streams } from '@portcullis/contracts';
import { membershipIndexModel } from './organization/membership-index.decider.ts';
import { organizationModel } from './organization/organization.state.ts';
import { sessionIndexModel } from './session/session-index.decider.ts';
import { sessionModel } from './session/session.decider.ts';
import { userModel } from './identity/user.decider.ts';
import { snapshotModelsOf } from './snapshot-models.ts';

describe('the models the background snapshotter keeps snapshots of', () => {
  it('picks the longest prefix a stream id has: an index of a user is not the user', () => {
    expect(snapshotModelsOf(streams.userSessions('u1'))).toEqual([sessionIndexModel]);
    expect(snapshotModelsOf(streams.userOrganizations('u1'))).toEqual([membershipIndexModel]);
    expect(snapshotModelsOf(streams.user('u1'))).toContain(userModel);
    expect(snapshotModelsOf(streams.organization('o1'))).toEqual([organizationModel]);
    expect(snapshotModelsOf(streams.organizationSlug('acme'))).toEqual([]);
    expect(snapshotModelsOf(streams.session('s1'))).toContain(sessionModel);
  });

  it('names no model for a stream of another kind, which it only unmarks', () => {
    expect(snapshotModelsOf(streams.mail('job-1'))).toEqual([]);
  });

  it('never names a model that keeps no snapshot', () => {
    for (const id of [streams.user('u'), streams.session('s'), streams.signIn('a@example.com'), streams.accountSignIn('u')]) {
      for (const model of snapshotModelsOf(id)) expect(model.snapshots).not.toBe(false);
    }
  });
});
