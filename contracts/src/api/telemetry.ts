import { z } from 'zod';
import { endpoint } from './endpoint.ts';

// Telemetry for operators: the api's figures in Prometheus' text format, and the snapshot the ops console's
// overview draws, built from the same instruments Prometheus reads.

/** How many minutes the overview's series cover, oldest first, the current (partial) minute last. */
export const OVERVIEW_MINUTES = 60;

const perMinute = z.array(z.number()).meta({ description: `one figure per minute, ${OVERVIEW_MINUTES} of them, oldest first; the last is the minute under way` });

const healthCheckSchema = z.object({
  ok: z.boolean(),
  detail: z.string().optional(),
  latencyMs: z.number().optional().meta({ description: 'how long the check took' }),
});

const registeredProcessSchema = z
  .object({
    instanceId: z.string(),
    service: z.enum(['api', 'projector', 'mailer']),
    host: z.string(),
    pid: z.number().int(),
    startedAt: z.string(),
    seenAt: z.string(),
    up: z.boolean().meta({ description: 'seen within the last 15 s' }),
    metricsUrl: z.string().nullable(),
    projections: z.array(z.string()).meta({ description: 'the projections a projector holds' }),
    eventLoopDelayP99Ms: z.number().nullable().meta({ description: 'from its /metrics; null when it could not be read' }),
  })
  .meta({ id: 'RegisteredProcess' });

const projectionLagSchema = z.object({
  name: z.string(),
  checkpoint: z.number().int().nullable().meta({ description: 'null until the projection has stored one' }),
  head: z.number().int(),
  lag: z.number().int().nullable().meta({ description: 'events of the log not applied yet' }),
  lagSeconds: z.number().nullable().meta({ description: 'how long the oldest of them has waited' }),
  holder: z.string().nullable().meta({ description: 'the instance id of the projector process holding it' }),
});

export const opsOverviewSchema = z
  .object({
    generatedAt: z.string(),
    answeredBy: z
      .object({ instanceId: z.string().nullable(), host: z.string(), pid: z.number().int() })
      .meta({ description: 'the api process that answered; the series are every api process\' figures summed' }),
    series: z.object({
      minutes: z.array(z.string()).meta({ description: 'the start of each minute (ISO 8601)' }),
      signIns: z.object({ success: perMinute, failure: perMinute, locked: perMinute }),
      signUps: perMinute,
      getSession: z.object({ requests: perMinute, p99Ms: z.array(z.number().nullable()).meta({ description: 'null for a minute with no request' }) }),
      rateLimited: perMinute.meta({ description: '429 answers of the rate limit' }),
      captchaRefused: perMinute,
      mail: z.object({ queued: perMinute, sent: perMinute, dead: perMinute }).meta({ description: 'from the delivery log, for every mailer' }),
    }),
    activeSessions: z.number().int().meta({ description: 'sessions not expired' }),
    projections: z.array(projectionLagSchema),
    mail: z.object({
      pending: z.number().int(),
      sent: z.number().int(),
      dead: z.number().int(),
      oldestUnsentSeconds: z.number().nullable(),
    }),
    health: z.object({
      postgres: healthCheckSchema,
      redis: healthCheckSchema.nullable().meta({ description: 'null without REDIS_URL' }),
      processes: z.array(registeredProcessSchema),
    }),
  })
  .meta({ id: 'OpsOverview' });
export type OpsOverview = z.infer<typeof opsOverviewSchema>;
export type RegisteredProcessView = z.infer<typeof registeredProcessSchema>;

export const telemetryEndpoints = {
  metrics: endpoint({
    operationId: 'metrics',
    method: 'GET',
    path: '/metrics',
    root: true,
    summary: "The api process' figures in Prometheus text format (requests per route, sign-ins, refusals, pools, event loop)",
    tag: 'Ops',
    auth: 'session-or-server',
  }),
  opsOverview: endpoint({
    operationId: 'opsOverview',
    method: 'GET',
    path: '/ops/overview',
    root: true,
    summary: 'What the ops console\'s overview draws: the last hour per minute, projection lag, mail, and the health of every process',
    tag: 'Ops',
    auth: 'session-or-server',
    answer: opsOverviewSchema,
  }),
};
