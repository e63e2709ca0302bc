import type { FastifyRequest } from 'fastify';
import { streams, type DomainEvent } from '@portcullis/contracts';
import type { PerimeterPorts } from './ports.ts';
import { clientAddress } from '../http/client-address.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { clientBucket } from './client-address.ts';

/**
 * Refusals at the perimeter that the audit trail shows (rate-limited sign-ins, captcha refusals), appended
 * on the client's `perimeter-…` stream. The refusal is answered without waiting for its event: a refused
 * client must not hold an append's worth of the api's time. `settled` lets shutdown wait for what is still
 * being written.
 */
export interface RefusalLog {
  record(request: FastifyRequest, event: DomainEvent): void;
  settled(): Promise<void>;
}

export function refusalLog(ctx: PerimeterPorts): RefusalLog {
  const pending = new Set<Promise<unknown>>();
  return {
    record(request, event) {
      const streamId = streams.perimeter(clientBucket(clientAddress(request) ?? ''));
      const written = ctx.commands
        .handle({ name: 'perimeter.refusal', request: requestMetadataOf(request), actorId: null, settle: 'none' }, (unit) => {
          unit.append(streamId, [event], { expected: 'any' });
          return Promise.resolve();
        })
        .catch((error: unknown) => request.log.warn({ err: error, type: event.type }, 'recording a perimeter refusal failed'))
        .finally(() => pending.delete(written));
      pending.add(written);
    },
    async settled() {
      await Promise.all([...pending]);
    },
  };
}
