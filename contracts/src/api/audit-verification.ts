import { z } from 'zod';
import { endpoint } from './endpoint.ts';

// The hash-chain check for operators: started over HTTP or by `npm run audit -- verify`, each recorded.

export const chainVerificationStatuses = ['running', 'intact', 'broken', 'failed'] as const;
export type ChainVerificationStatus = (typeof chainVerificationStatuses)[number];

const chainVerificationSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(chainVerificationStatuses).meta({
      description: 'intact: every event\'s hash holds to the head; broken: a position does not hold; failed: the check itself could not finish',
    }),
    source: z.enum(['api', 'cli']).meta({ description: 'where the check ran' }),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
    checked: z.number().int().meta({ description: 'events checked so far' }),
    verifiedTo: z.number().int().meta({ description: 'the last position that verified' }),
    head: z.number().int().nullable().meta({ description: 'the log head the check walks to' }),
    percent: z.number().min(0).max(100).nullable(),
    failure: z
      .object({ position: z.number().int(), problem: z.enum(['altered', 'missing', 'diverged', 'bad-signature']) })
      .nullable()
      .meta({ description: 'the first position that does not hold, and why' }),
    error: z.string().nullable().meta({ description: 'why a failed check could not finish' }),
  })
  .meta({ id: 'ChainVerification' });
export type ChainVerification = z.infer<typeof chainVerificationSchema>;

export const auditVerificationEndpoints = {
  verifyAuditChain: endpoint({
    operationId: 'verifyAuditChain',
    method: 'POST',
    path: '/ops/audit/verify',
    root: true,
    summary: 'Start walking the log\'s hash chain in the background; answers the check already under way if there is one',
    tag: 'Audit',
    auth: 'session-or-server',
    answer: z.object({
      verification: chainVerificationSchema,
      started: z.boolean().meta({ description: 'false: a check was already under way, and this is it' }),
    }),
  }),
  auditVerification: endpoint({
    operationId: 'auditVerification',
    method: 'GET',
    path: '/ops/audit/verification',
    root: true,
    summary: 'The latest hash-chain check (the one under way, with its progress, or the last finished) and the last finished one',
    tag: 'Audit',
    auth: 'session-or-server',
    answer: z.object({
      latest: chainVerificationSchema.nullable().meta({ description: 'null: the chain was never checked' }),
      lastFinished: chainVerificationSchema.nullable(),
    }),
  }),
};
