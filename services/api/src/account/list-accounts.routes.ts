import type { FastifyInstance } from 'fastify';
import { accountLifecycleEndpoints as endpoints } from '@portcullis/contracts';
import { sql } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { isoTime } from '../read-model.ts';
import { scopesOf } from '../identity/provider-accounts.ts';
import { requireSession } from '../session/current-session.ts';

interface AccountRow {
  id: string;
  providerId: string;
  accountId: string;
  userId: string;
  scope: string | null;
  createdAt: number | string;
  updatedAt: number | string;
}

export function listAccountsRoutes(ctx: AccountPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.listAccounts, async (request, reply) => {
      const current = await requireSession(ctx, request, reply);
      // The account read model is the identity projection's, which every command touching accounts waits for.
      const rows = (await ctx.pool.any(sql.unsafe`
        SELECT id, "providerId", "accountId", "userId", scope, "createdAt", "updatedAt"
        FROM account WHERE "userId" = ${current.user.id}
        ORDER BY "createdAt", id`)) as readonly AccountRow[];
      return rows.map((row) => ({
        id: row.id,
        providerId: row.providerId,
        provider: row.providerId,
        accountId: row.accountId,
        userId: row.userId,
        scopes: scopesOf(row.scope),
        createdAt: isoTime(row.createdAt),
        updatedAt: isoTime(row.updatedAt),
      }));
    });
  };
}
