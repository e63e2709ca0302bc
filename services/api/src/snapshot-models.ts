import type { StreamModel } from '@portcullis/contracts';
import { adminUserModel } from './admin/user-admin.decider.ts';
import { passwordResetModel } from './account/password-reset.decider.ts';
import { accountModel } from './identity/account.decider.ts';
import { signInAccountModel } from './identity/sign-in-account.state.ts';
import { signInGuardModel } from './identity/sign-in-guard.decider.ts';
import { userModel } from './identity/user.decider.ts';
import { membershipIndexModel } from './organization/membership-index.decider.ts';
import { organizationModel } from './organization/organization.state.ts';
import { impersonationIndexModel } from './session/impersonation-index.decider.ts';
import { sessionAnswerModel, userAnswerModel } from './session/session-answer.state.ts';
import { sessionIndexModel } from './session/session-index.decider.ts';
import { sessionModel } from './session/session.decider.ts';

type Models = ReadonlyArray<StreamModel<unknown>>;

/**
 * The models commands fold each kind of stream that can grow long with, by stream id prefix (the longest
 * that matches wins: `user-sessions-` before `user-`): what the background snapshotter keeps snapshots of.
 * Streams of other kinds (reservations, flows, tokens, mail jobs) stay a few events long; the snapshotter
 * only unmarks them. A model missing here costs its first load a chunked fold, never a wrong state.
 */
const MODELS_BY_PREFIX: ReadonlyArray<readonly [string, Models]> = (
  [
    ['session-', [sessionModel, sessionAnswerModel]],
    ['user-', [userModel, accountModel, adminUserModel, signInAccountModel, userAnswerModel]],
    ['user-sessions-', [sessionIndexModel]],
    ['user-organizations-', [membershipIndexModel]],
    ['impersonations-', [impersonationIndexModel]],
    ['organization-', [organizationModel]],
    ['organization-slug-', []],
    // Email, username and account guards alike (`sign-in-<address>`, `sign-in-username-`, `sign-in-account-`).
    ['sign-in-', [signInGuardModel]],
    ['password-reset-', [passwordResetModel]],
  ] as Array<readonly [string, Models]>
).sort(([a], [b]) => b.length - a.length);

export function snapshotModelsOf(streamId: string): Models {
  return MODELS_BY_PREFIX.find(([prefix]) => streamId.startsWith(prefix))?.[1] ?? [];
}
