import { z } from 'zod';
import { endpoint } from './endpoint.ts';

// What operators and probes call: outside the better-auth API, but declared like it so clients and
// the OpenAPI document know them.

const readinessCheckSchema = z.object({
  ok: z.boolean(),
  degraded: z
    .boolean()
    .optional()
    .meta({ description: 'true on a failing check the process serves without (Redis: the api answers from Postgres)' }),
  detail: z.string().optional(),
});

const readinessAnswerSchema = z.object({
  status: z
    .enum(['ready', 'degraded', 'not_ready'])
    .meta({ description: '`degraded` (still 200): a check failed that the process serves without, such as Redis' }),
  checks: z.record(z.string(), readinessCheckSchema).meta({ description: 'postgres, kurrentdb (when the log is there), projections (with their lag), redis' }),
});

const errorPageQuerySchema = z.object({
  error: z.string().max(2048).optional(),
  error_description: z.string().max(2048).optional(),
});

export const opsEndpoints = {
  ok: endpoint({
    operationId: 'ok',
    method: 'GET',
    path: '/ok',
    summary: 'Answers while the auth API is up (better-auth\'s liveness route)',
    tag: 'Ops',
    auth: 'public',
    answer: z.object({ ok: z.boolean() }),
  }),
  errorPage: endpoint({
    operationId: 'error',
    method: 'GET',
    path: '/error',
    summary: 'The page browsers land on when a link or callback fails (`?error=CODE`)',
    tag: 'Ops',
    auth: 'public',
    query: errorPageQuerySchema,
    html: true,
  }),
  healthz: endpoint({
    operationId: 'healthz',
    method: 'GET',
    path: '/healthz',
    root: true,
    summary: 'Liveness: the process answers',
    tag: 'Ops',
    auth: 'public',
    answer: z.object({ status: z.literal('ok') }),
  }),
  readyz: endpoint({
    operationId: 'readyz',
    method: 'GET',
    path: '/readyz',
    root: true,
    summary: 'Readiness: Postgres answers and the read models follow the log (503 otherwise); Redis away is degraded, still 200',
    tag: 'Ops',
    auth: 'public',
    answer: readinessAnswerSchema,
    otherAnswers: { 503: readinessAnswerSchema },
  }),
  root: endpoint({
    operationId: 'root',
    method: 'GET',
    path: '/',
    root: true,
    summary: 'Leads to the ops console (/console/), or to the start page where the console is not built',
    tag: 'Ops',
    auth: 'public',
    redirects: true,
  }),
  startPage: endpoint({
    operationId: 'startPage',
    method: 'GET',
    path: '/start',
    root: true,
    summary: 'What runs and where: the page a newcomer opens first',
    tag: 'Ops',
    auth: 'public',
    html: true,
  }),
  readme: endpoint({
    operationId: 'readme',
    method: 'GET',
    path: '/readme',
    root: true,
    summary: 'The README, as text',
    tag: 'Ops',
    auth: 'public',
  }),
  consoleHome: endpoint({
    operationId: 'consoleHome',
    method: 'GET',
    path: '/console',
    root: true,
    summary: 'Leads to /console/',
    tag: 'Ops',
    auth: 'public',
    redirects: true,
  }),
  console: endpoint({
    operationId: 'console',
    method: 'GET',
    path: '/console/*',
    root: true,
    summary: 'The ops console (React): its page for every path under /console/, and its built assets',
    tag: 'Ops',
    auth: 'public',
    html: true,
  }),
};
