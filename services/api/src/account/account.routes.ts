import type { FastifyInstance } from 'fastify';
import type { AccountPorts } from './ports.ts';
import { changeEmailRoutes } from './change-email.routes.ts';
import { deleteUserRoutes } from './delete-user.routes.ts';
import { emailVerificationRoutes } from './email-verification.routes.ts';
import { listAccountsRoutes } from './list-accounts.routes.ts';
import { unlinkAccountRoutes } from './unlink-account.routes.ts';
import { passwordRoutes } from './password.routes.ts';

/**
 * The email lifecycle of an account: verification, password reset and change, change of email, deletion;
 * and the accounts linked to a user.
 */
export function accountRoutes(ctx: AccountPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    await app.register(emailVerificationRoutes(ctx));
    await app.register(passwordRoutes(ctx));
    await app.register(changeEmailRoutes(ctx));
    await app.register(deleteUserRoutes(ctx));
    await app.register(listAccountsRoutes(ctx));
    await app.register(unlinkAccountRoutes(ctx));
  };
}
