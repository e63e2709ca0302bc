import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { auditEndpoints as endpoints, securityEndpoints, type AuditFilter } from '@portcullis/contracts';
import { exportChainHead } from '@portcullis/platform';
import type { AuditPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { operatorAccess } from '../http/operator-access.ts';
import { auditIndexedTo, searchAudit } from './audit-search.ts';
import { securityOverview } from './security-view.ts';
import { timeTravelRoutes } from './time-travel.routes.ts';
import type { AuditStreamModels } from './time-travel.ts';

/** Rows an export reads at a time: its memory is one page, whatever the export's length. */
const EXPORT_PAGE = 500;

/**
 * The audit trail for operators (see `operatorAccess`): search, the NDJSON export, the signed log head,
 * the state of a user or organization as of any point of the log, one event in detail, and the security view.
 */
export function auditRoutes(ctx: AuditPorts, models?: AuditStreamModels) {
  const authorize = operatorAccess(ctx, { sessions: true });
  const reads = { db: ctx.pool, store: ctx.store, chain: ctx.chain, personalData: ctx.personalData };

  async function* exported(filter: AuditFilter): AsyncGenerator<string> {
    let cursor = filter.cursor;
    for (;;) {
      const page = await searchAudit(reads, { ...filter, ...(cursor !== undefined ? { cursor } : {}) }, EXPORT_PAGE);
      for (const event of page.events) yield `${JSON.stringify(event)}\n`;
      if (page.nextCursor === null) return;
      cursor = page.nextCursor;
    }
  }

  return function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.auditEvents, async (request, reply) => {
      await authorize(request, reply);
      const { limit, ...filter } = request.query;
      const [page, indexedTo] = await Promise.all([searchAudit(reads, filter, limit), auditIndexedTo(ctx.pool)]);
      reply.header('cache-control', 'no-store');
      return { ...page, indexedTo };
    });

    route(app, endpoints.auditExport, async (request, reply) => {
      await authorize(request, reply);
      // Pulled a page at a time as the client reads: a slow reader holds one page, never the export.
      return reply
        .header('cache-control', 'no-store')
        .header('content-disposition', 'attachment; filename="audit.ndjson"')
        .type('application/x-ndjson')
        .send(Readable.from(exported(request.query)));
    });

    route(app, endpoints.auditHead, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      return exportChainHead(ctx.chain, ctx.config.audit.signingKey);
    });

    route(app, securityEndpoints.securityOverview, async (request, reply) => {
      await authorize(request, reply);
      reply.header('cache-control', 'no-store');
      const deps = {
        db: ctx.pool,
        store: ctx.store,
        personalData: ctx.personalData,
        now: ctx.clock(),
        adminRoles: models?.adminRoles ?? [],
        adminUserIds: ctx.config.admin.adminUserIds,
      };
      return securityOverview(deps, request.query);
    });

    timeTravelRoutes(ctx, authorize, models)(app);
    return Promise.resolve();
  };
}
