import { socialRoutes } from './social/social.routes.ts';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ApiContext } from './context.ts';
import { accountRoutes } from './account/account.routes.ts';
import { adminRoutes } from './admin/routes.ts';
import { adminBulkRoutes } from './admin/bulk-users.routes.ts';
import { adminUserModel } from './admin/user-admin.decider.ts';
import { adminRoleNames } from './admin/access.decider.ts';
import { credentialsRoutes } from './credentials/credentials.routes.ts';
import { cookies } from './http/cookies.ts';
import { registerCors } from './http/cors.ts';
import { checkAnswersAgainstDeclarations } from './http/answer-check.ts';
import { answerFrameworkError, installErrorHandling } from './http/error-handler.ts';
import { useZodRouteSchemas } from './http/route-schemas.ts';
import { serializeRequest } from './http/log-serializers.ts';
import { deferredRequestLogger } from './http/request-logger.ts';
import { auditRoutes } from './audit/audit.routes.ts';
import { adminViewRoutes } from './console/admin-views.routes.ts';
import { mailOpsRoutes } from './ops/mail-ops.routes.ts';
import { installHttpMetrics } from './ops/http-metrics.ts';
import { telemetryRoutes } from './ops/telemetry.routes.ts';
import { projectionRoutes } from './ops/projections.routes.ts';
import { chainVerificationRoutes } from './audit/chain-verification.routes.ts';
import { healthRoutes, publicOpsRoutes } from './ops/ops.routes.ts';
import { openApiRoutes, registerOpenApi } from './openapi/openapi.routes.ts';
import { startPageRoutes } from './ops/start-page.routes.ts';
import { consoleRoutes } from './ops/console.routes.ts';
import { membershipIndexModel } from './organization/membership-index.decider.ts';
import { organizationModel } from './organization/organization.state.ts';
import { organizationRoutes } from './organization/routes.ts';
import { perimeter as createPerimeter } from './perimeter/perimeter.ts';
import { traceRequests } from './http/request-trace.ts';
import type { RequestTracer } from '@portcullis/platform/telemetry/request-span';
import { sessionRoutes } from './session/session.routes.ts';
import { usernameRoutes } from './username/username.routes.ts';
import { userRoutes } from './user/user.routes.ts';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Builds the api without listening, so tests can `inject` and server.ts can `listen`. */
export interface BuildAppOptions {
  /** Gives every request a trace (the server passes one when the entry's tracing started). */
  readonly requestTracer?: RequestTracer | null;
}

export async function buildApp(ctx: ApiContext, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // The api's own logger (format, redaction), with request URLs logged without the tokens some of them
    // carry (reset-password/:token, verify-email?token=).
    // pino's child type is narrower than fastify's logger type, which every plugin is typed against.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    loggerInstance: ctx.log.child({}, { serializers: { req: serializeRequest } }) as FastifyBaseLogger,
    childLoggerFactory: deferredRequestLogger,
    bodyLimit: ctx.config.bodyLimitBytes,
    genReqId: (request) => {
      const offered = request.headers['x-request-id'];
      return typeof offered === 'string' && REQUEST_ID.test(offered) ? offered : randomUUID();
    },
    // Refuse prototype-polluting keys in JSON bodies outright.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    routerOptions: { ignoreTrailingSlash: false },
    frameworkErrors: answerFrameworkError,
    // request.ip: the socket's peer, or what a trusted proxy forwards in X-Forwarded-For (AUTH_TRUSTED_PROXIES).
    trustProxy: ctx.config.trustedProxies.length > 0 ? [...ctx.config.trustedProxies] : false,
  });
  // First of all hooks, so the perimeter's and every later hook's work is part of the request's trace.
  if (options.requestTracer) traceRequests(app, options.requestTracer);
  installErrorHandling(app);
  // Root hooks, before any route: every route's answers are counted and timed.
  installHttpMetrics(app, ctx.config.basePath);
  useZodRouteSchemas(app);
  // Before any route: the document is gathered from the routes as they are registered.
  await registerOpenApi(app, ctx);
  if (ctx.config.checkAnswers) checkAnswersAgainstDeclarations(app);
  await app.register(cookies);
  // better-auth accepts HTML form posts on sign-in and sign-up.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  // Before the perimeter's hook, so its refusals carry CORS headers to a trusted app.
  await registerCors(app, ctx.config.trustedOrigins);
  // One hook per phase: fastify sets up a hook runner per request for each. The request id goes out on
  // every answer, the perimeter's refusals (429 from the rate limit first of all) included.
  const perimeter = createPerimeter(ctx);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    perimeter.admit(request, reply, done);
  });
  app.addHook('preValidation', (request, reply, done) => perimeter.inspect(request, reply, done));
  app.addHook('onClose', () => perimeter.close());

  await app.register(startPageRoutes(ctx));
  await app.register(consoleRoutes(ctx));
  await app.register(healthRoutes(ctx));
  await app.register(mailOpsRoutes(ctx));
  await app.register(telemetryRoutes(ctx));
  await app.register(projectionRoutes(ctx));
  await app.register(chainVerificationRoutes(ctx));
  // The organization and admin areas' own models, so time travel folds as their deciders do.
  await app.register(auditRoutes(ctx, { organization: organizationModel, userOrganizations: membershipIndexModel, adminUser: adminUserModel, adminRoles: adminRoleNames }));
  // The ops console's admin views and bulk actions, beside the audit trail under /ops.
  await app.register(adminViewRoutes(ctx));
  await app.register(adminBulkRoutes(ctx));
  await app.register(
    async (auth) => {
      await auth.register(publicOpsRoutes(ctx));
      await auth.register(credentialsRoutes(ctx));
      await auth.register(sessionRoutes(ctx));
      await auth.register(userRoutes(ctx));
      await auth.register(usernameRoutes(ctx));
      await auth.register(accountRoutes(ctx));
      await auth.register(socialRoutes(ctx));
      await auth.register(organizationRoutes(ctx));
      await auth.register(adminRoutes(ctx));
      await auth.register(openApiRoutes(ctx));
    },
    { prefix: ctx.config.basePath },
  );
  return app;
}
