import { z } from 'zod';
import { auditIndexProjectionName, projectionNames } from '../projections.ts';
import { endpoint } from './endpoint.ts';

// The projections for operators: how far each read model has applied the log, which process holds it, and
// rebuilds started over HTTP (the api records the request; a projector process runs it).

/**
 * The read models a rebuild may replace beside themselves (`npm run rebuild-projection` takes the same):
 * the erasure projection and the mail followers own none, and replaying them would only redo side effects.
 */
export const rebuildableProjectionNames: ReadonlySet<string> = new Set([...Object.values(projectionNames), auditIndexProjectionName]);

/** The channel a rebuild request is announced on, to the projector processes that run rebuilds. */
export const PROJECTION_REBUILD_CHANNEL = 'portcullis_projection_rebuilds';

export const projectionRebuildStatuses = ['requested', 'running', 'succeeded', 'failed'] as const;
export type ProjectionRebuildStatus = (typeof projectionRebuildStatuses)[number];

const projectionRebuildSchema = z
  .object({
    id: z.uuid(),
    projection: z.string(),
    status: z.enum(projectionRebuildStatuses).meta({ description: 'requested until a projector process claims it' }),
    requestedAt: z.string(),
    requestedBy: z.string().nullable().meta({ description: 'the admin\'s user id; null for a server call' }),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    position: z.number().int().meta({ description: 'the log position the rebuild has replayed to' }),
    head: z.number().int().nullable().meta({ description: 'the log head when the position was reached' }),
    percent: z.number().min(0).max(100).nullable(),
    worker: z.string().nullable().meta({ description: 'the projector process running it (host and pid)' }),
    error: z.string().nullable(),
  })
  .meta({ id: 'ProjectionRebuild' });
export type ProjectionRebuild = z.infer<typeof projectionRebuildSchema>;

const projectionHolderSchema = z
  .object({
    pid: z.number().int().meta({ description: 'the Postgres backend holding the projection\'s advisory lock' }),
    applicationName: z.string(),
    clientAddress: z.string().nullable(),
    connectedAt: z.string().nullable(),
  })
  .meta({ id: 'ProjectionHolder' });
export type ProjectionHolder = z.infer<typeof projectionHolderSchema>;

const projectionStatusSchema = z
  .object({
    name: z.string(),
    store: z.enum(['postgres', 'redis']),
    checkpoint: z.number().int().nullable().meta({ description: 'null: not started (or unreadable: see detail)' }),
    checkpointUpdatedAt: z.string().nullable(),
    lagEvents: z.number().int().nullable().meta({ description: 'log positions between the checkpoint and the head' }),
    lagSeconds: z.number().nullable().meta({ description: 'age of the oldest event not yet applied; 0 when caught up' }),
    holder: projectionHolderSchema.nullable().meta({ description: 'null: no process runs it now' }),
    rebuildable: z.boolean(),
    rebuild: projectionRebuildSchema.nullable().meta({ description: 'the latest rebuild' }),
    detail: z.string().nullable(),
  })
  .meta({ id: 'ProjectionStatus' });
export type ProjectionStatus = z.infer<typeof projectionStatusSchema>;

export const projectionOpsEndpoints = {
  listProjections: endpoint({
    operationId: 'listProjections',
    method: 'GET',
    path: '/ops/projections',
    root: true,
    summary: 'Every projection: checkpoint, log head, lag, the process holding it and its latest rebuild',
    tag: 'Ops',
    auth: 'session-or-server',
    answer: z.object({ head: z.number().int(), projections: z.array(projectionStatusSchema) }),
  }),
  rebuildProjection: endpoint({
    operationId: 'rebuildProjection',
    method: 'POST',
    path: '/ops/projections/:name/rebuild',
    root: true,
    summary: 'Rebuild a read model beside the served one and swap it in at the head; answers the rebuild already under way if there is one',
    tag: 'Ops',
    auth: 'session-or-server',
    params: z.object({ name: z.string().max(200) }),
    answer: z.object({
      rebuild: projectionRebuildSchema,
      started: z.boolean().meta({ description: 'false: a rebuild of this projection was already under way, and this is it' }),
    }),
  }),
  projectionRebuild: endpoint({
    operationId: 'projectionRebuild',
    method: 'GET',
    path: '/ops/projections/rebuilds/:id',
    root: true,
    summary: 'A rebuild and its live progress',
    tag: 'Ops',
    auth: 'session-or-server',
    params: z.object({ id: z.uuid() }),
    answer: projectionRebuildSchema,
  }),
};
