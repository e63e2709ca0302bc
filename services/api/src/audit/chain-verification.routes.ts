import type { FastifyInstance } from 'fastify';
import { auditVerificationEndpoints as endpoints } from '@portcullis/contracts';
import type { LogChainPort, LogPort } from '../ports.ts';
import type { AuditPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { operatorAccess } from '../http/operator-access.ts';
import { latestChainVerifications, startChainVerification } from './chain-verification.ts';

/**
 * The hash-chain check for operators: started here, it runs in this process in the background (one at a
 * time across processes) and records its progress and verdict, which the second endpoint answers with the
 * checks `npm run audit -- verify` ran.
 */
export function chainVerificationRoutes(ctx: AuditPorts & LogPort & LogChainPort) {
  const authorize = operatorAccess(ctx, { sessions: true });

  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.verifyAuditChain, async (request, reply) => {
      await authorize(request, reply);
      const check = await startChainVerification(ctx.pool, ctx.chain, 'api');
      void check.done?.then(
        (verdict) => {
          if (verdict && !verdict.ok) ctx.log.error({ failure: verdict.failure, verifiedTo: verdict.verifiedTo }, 'the log\'s hash chain does not hold');
        },
        (err: unknown) => ctx.log.error({ err }, 'the hash-chain check failed'),
      );
      reply.header('cache-control', 'no-store');
      return { verification: check.verification, started: check.started };
    });

    route(app, endpoints.auditVerification, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return latestChainVerifications(ctx.pool);
    });
  };
}
