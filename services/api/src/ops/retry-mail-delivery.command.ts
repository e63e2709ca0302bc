import { DomainError, MailRetryRequested, mailKinds, streams, type MailKind } from '@portcullis/contracts';
import { sql, type RequestMetadata } from '@portcullis/platform';
import type { CommandsPort, PoolPort } from '../ports.ts';

/**
 * retry a dead letter: appends `mail.retry_requested.v1` to the job's stream; the mailer, which owns the
 * delivery log, makes the job pending again and sends it. Only a dead job is retried: a pending one is
 * still being tried, a sent one was delivered.
 */
export async function retryMailDelivery(
  ports: CommandsPort & PoolPort,
  request: RequestMetadata,
  command: { readonly jobId: string; readonly operatorId: string | null },
): Promise<{ jobId: string; requestedAt: string }> {
  const delivery = (await ports.pool.maybeOne(sql.unsafe`
    SELECT kind, user_id, status FROM mail_delivery WHERE job_id = ${command.jobId}`)) as { kind: string; user_id: string; status: string } | null;
  if (!delivery) throw new DomainError('MAIL_DELIVERY_NOT_FOUND');
  if (delivery.status !== 'dead') throw new DomainError('MAIL_DELIVERY_NOT_DEAD');
  const kind = mailKinds.find((k): k is MailKind => k === delivery.kind);
  if (!kind) throw new DomainError('MAIL_DELIVERY_NOT_FOUND');
  let requestedAt = '';
  await ports.commands.handle(
    {
      name: 'mail.retry',
      request,
      actorId: command.operatorId,
      ...(command.operatorId ? { actorKind: 'admin' as const } : {}),
      serialize: [streams.mail(command.jobId)],
      // No read model waits on it: the mailer applies it to its own delivery log.
      settle: 'none',
    },
    async (unit) => {
      requestedAt = unit.metadata.occurredAt;
      // The job's stream holds its queueing; retries follow it, however many there were.
      unit.append(streams.mail(command.jobId), [MailRetryRequested({ jobId: command.jobId, kind, userId: delivery.user_id })], { expected: 'stream_exists' });
    },
  );
  return { jobId: command.jobId, requestedAt };
}
