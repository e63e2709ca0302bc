import type { UnitOfWork } from '@portcullis/platform';

/**
 * What other areas add to identity's commands without identity knowing them: each is registered by the
 * composition root (api-context.ts), so a leaf such as organizations reaches into a user's deletion
 * without the account routes importing it.
 */
export interface IdentityExtensions {
  /**
   * Within the command that deletes a user, in its one atomic append: what else the user gives up (their
   * memberships, say), each decided on the streams it loads.
   */
  readonly userDeletion: ReadonlyArray<(unit: UnitOfWork, userId: string) => Promise<void>>;
}
