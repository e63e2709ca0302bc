import type { FastifyInstance } from 'fastify';
import { accountLifecycleEndpoints as endpoints, DomainError } from '@portcullis/contracts';
import type { AccountPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { readAccount } from '../identity/account-model.ts';
import { requireFreshSession, requireSession } from '../session/current-session.ts';

/**
 * POST /unlink-account, as better-auth decides it: a fresh session, never the last account
 * (`allowUnlinkingAll` is not offered), then the account the body names among the caller's. Until social
 * sign-in a user holds at most the credential account, so the answer is one of those two refusals; the
 * event that removes an account comes with the accounts that can be removed.
 */
export function unlinkAccountRoutes(ctx: AccountPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.unlinkAccount, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      requireFreshSession(ctx, current);
      // Decided on the log: the read model may not show a password set a moment ago.
      const account = await readAccount(ctx, current.user.id);
      if (account.status === 'active' && account.credential) throw new DomainError('FAILED_TO_UNLINK_LAST_ACCOUNT');
      // No account at all (a user an admin created without a password): whatever the body names is not one.
      throw new DomainError('ACCOUNT_NOT_FOUND');
    });
  };
}
