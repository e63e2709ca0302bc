import { describe, expect, it } from 'vitest';
import { actorOf, eventMetadataSchema } from '@portcullis/contracts';
import { actorFor, eventMetadataOf, systemRequest, validTraceparent, type RequestMetadata } from './request-metadata.ts';

const httpRequest: RequestMetadata = {
  ipAddress: '203.0.113.7',
  userAgent: 'curl/8',
  requestId: 'req-1',
  correlationId: null,
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
};

describe('the actor of a command', () => {
  it('is the signed-in user, or anonymous for a request without one, or system without a request', () => {
    expect(actorFor(httpRequest, 'u1')).toEqual({ kind: 'user', id: 'u1' });
    expect(actorFor(httpRequest, null)).toEqual({ kind: 'anonymous', id: null });
    expect(actorFor(systemRequest, null)).toEqual({ kind: 'system', id: null });
  });

  it('is the server for a server call, an impersonator for an impersonated session, and whatever a command names', () => {
    expect(actorFor({ ...httpRequest, serverCall: true }, null)).toEqual({ kind: 'server', id: null });
    expect(actorFor({ ...httpRequest, impersonatedBy: 'admin1' }, 'u1')).toEqual({
      kind: 'impersonator',
      id: 'u1',
      impersonatorId: 'admin1',
    });
    // An admin acting on someone else passes its own id as actorId and says it acts as admin.
    expect(actorFor(httpRequest, 'admin1', 'admin')).toEqual({ kind: 'admin', id: 'admin1' });
  });

  it('is the impersonator behind an impersonation session even when the command says it acts as admin', () => {
    expect(actorFor({ ...httpRequest, impersonatedBy: 'root1' }, 'admin2', 'admin')).toEqual({
      kind: 'impersonator',
      id: 'admin2',
      impersonatorId: 'root1',
    });
  });

  it('rides the metadata beside actorId, with where the request came from', () => {
    const metadata = eventMetadataOf(httpRequest, 'u1', new Date('2026-01-02T03:04:05Z'), 'admin');
    expect(metadata).toMatchObject({
      occurredAt: '2026-01-02T03:04:05.000Z',
      actorId: 'u1',
      actor: { kind: 'admin', id: 'u1' },
      ipAddress: '203.0.113.7',
      userAgent: 'curl/8',
      requestId: 'req-1',
      correlationId: 'req-1',
      traceparent: httpRequest.traceparent,
    });
    expect(eventMetadataSchema.parse(metadata)).toEqual(metadata);
  });

  it('is derived for events stored before the actor was recorded', () => {
    const old = eventMetadataSchema.parse({ occurredAt: '2025-01-01T00:00:00.000Z', actorId: 'u1', correlationId: 'c' });
    expect(actorOf(old)).toEqual({ kind: 'user', id: 'u1' });
    expect(actorOf(eventMetadataSchema.parse({ occurredAt: '2025-01-01T00:00:00.000Z', requestId: 'r' }))).toEqual({ kind: 'anonymous', id: null });
    expect(actorOf(eventMetadataSchema.parse({ occurredAt: '2025-01-01T00:00:00.000Z' }))).toEqual({ kind: 'system', id: null });
  });

  it('reads an admin command stored from an impersonation session as the impersonator\'s, naming the real admin', () => {
    const stored = eventMetadataSchema.parse({
      occurredAt: '2026-01-01T00:00:00.000Z',
      actorId: 'admin2',
      actor: { kind: 'admin', id: 'admin2' },
      impersonatedBy: 'root1',
    });
    expect(actorOf(stored)).toEqual({ kind: 'impersonator', id: 'admin2', impersonatorId: 'root1' });
    const plainAdmin = eventMetadataSchema.parse({ occurredAt: '2026-01-01T00:00:00.000Z', actorId: 'a', actor: { kind: 'admin', id: 'a' } });
    expect(actorOf(plainAdmin)).toEqual({ kind: 'admin', id: 'a' });
  });
});

describe('the traceparent a request carries', () => {
  it('is kept only as a W3C trace context value', () => {
    const valid = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(validTraceparent(valid)).toBe(valid);
    for (const invalid of [
      null,
      '',
      'hello',
      `${valid}-extra`,
      '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01',
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\u0000',
    ]) {
      expect(validTraceparent(invalid), String(invalid)).toBeNull();
    }
  });
});
