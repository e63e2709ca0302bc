import { describe, expect, it } from 'vitest';
import {
  AccessDeniedError,
  AppendConsistencyViolationError,
  NotLeaderError,
  StreamDeletedError,
  StreamTombstonedError,
  UnavailableError,
  WrongExpectedVersionError as KurrentWrongExpectedVersionError,
  UnknownError,
} from '@kurrent/kurrentdb-client';
import type { EventMetadata } from '@portcullis/contracts';
import { WrongExpectedVersionError, type StreamWrite } from './event-store.ts';
import {
  COMMIT_LOOKBACK_BYTES,
  KurrentNames,
  appendRequestOf,
  classifyFailure,
  decodeMetadata,
  encodeMetadata,
  eventIdKey,
  expectedStateOf,
  onePositionRead,
  placeInRange,
  positionOf,
  positionsToRead,
  readFrom,
  toRecordedEvent,
  versionOfRevision,
  versionOfState,
  type KurrentRecord,
} from './kurrentdb-mapping.ts';

const names = new KurrentNames('portcullis');

describe('KurrentDB names', () => {
  it('puts a log\'s streams under its namespace, and reads back only its own', () => {
    expect(names.streamName('user-42')).toBe('portcullis/user-42');
    expect(names.streamIdOf('portcullis/user-42')).toBe('user-42');
    expect(names.streamIdOf('portcullis/email-a/b')).toBe('email-a/b');
    expect(names.streamIdOf('other/user-42')).toBeNull();
    expect(names.streamIdOf('portcullis-test/user-42')).toBeNull();
    expect(names.streamIdOf('$stats-127.0.0.1:2113')).toBeNull();
  });

  it('keeps what lies beside the log out of the prefix the log is read by', () => {
    expect(names.identityStream.startsWith(names.eventPrefix)).toBe(false);
    expect(names.streamIdOf(names.identityStream)).toBeNull();
  });

  it('refuses a namespace that could reach into another\'s streams', () => {
    for (const bad of ['', 'a/b', 'a~b', 'a b', '$system']) expect(() => new KurrentNames(bad)).toThrow(/namespace/);
  });
});

describe('expected versions and revisions', () => {
  it('maps our event counts to KurrentDB revisions counted from 0', () => {
    expect(expectedStateOf('any')).toBe('any');
    expect(expectedStateOf('no_stream')).toBe('no_stream');
    expect(expectedStateOf('stream_exists')).toBe('stream_exists');
    // Version 0 is "no events yet", which KurrentDB states as no stream, not as a revision.
    expect(expectedStateOf(0)).toBe('no_stream');
    expect(expectedStateOf(1)).toBe(0n);
    expect(expectedStateOf(3)).toBe(2n);
    expect(() => expectedStateOf(-1)).toThrow();
    expect(() => expectedStateOf(1.5)).toThrow();
  });

  it('reads a revision back as the version the stream is at', () => {
    expect(versionOfRevision(0n)).toBe(1);
    expect(versionOfRevision(41n)).toBe(42);
    for (const version of [1, 2, 1000]) expect(versionOfRevision(expectedStateOf(version) as bigint)).toBe(version);
    expect(versionOfState('no_stream')).toBe(0);
    expect(versionOfState(2n)).toBe(3);
    // A consistency check reports a deleted stream as -5 and a tombstoned one as -6: nothing to read.
    expect(versionOfState(-5n)).toBe(0);
    expect(versionOfState(-6n)).toBe(0);
  });
});

describe('appends', () => {
  const metadata: EventMetadata = { occurredAt: '2026-01-02T03:04:05.678Z', actorId: 'u1' };
  let counter = 0;
  const newId = () => `generated-${(counter += 1)}`;
  const event = (n: number, eventId?: string) => ({ type: 'test.happened.v1', data: { n }, metadata, ...(eventId ? { eventId } : {}) });

  it('is a multi-stream append when every write carries events, one request a stream, in the order given', () => {
    counter = 0;
    const request = appendRequestOf(
      names,
      [
        { streamId: 'user-1', expectedVersion: 'no_stream', events: [event(1, 'id-a'), event(2)] },
        { streamId: 'email-hmac-ab', expectedVersion: 0, events: [event(3, 'id-c')] },
        { streamId: 'org-9', expectedVersion: 4, events: [event(4)] },
        { streamId: 'log-x', expectedVersion: 'any', events: [event(5)] },
      ],
      newId,
    );
    expect(request.kind).toBe('streams');
    const { streams } = request as Extract<typeof request, { kind: 'streams' }>;
    expect(streams.map((s) => [s.streamName, s.expectedState])).toEqual([
      ['portcullis/user-1', 'no_stream'],
      ['portcullis/email-hmac-ab', 'no_stream'],
      ['portcullis/org-9', 3n],
      ['portcullis/log-x', 'any'],
    ]);
    // The caller's ids kept, the others made once here; JSON content with the metadata as strings.
    expect(streams.flatMap((s) => s.events.map((e) => e.id))).toEqual(['id-a', 'generated-1', 'id-c', 'generated-2', 'generated-3']);
    expect(streams[0]!.events[1]).toEqual({ id: 'generated-1', contentType: 'application/json', type: 'test.happened.v1', data: { n: 2 }, metadata: encodeMetadata(metadata) });
  });

  it('is records and checks when a write only checks its stream, every expected version checked but `any`', () => {
    counter = 0;
    const request = appendRequestOf(
      names,
      [
        { streamId: 'user-1', expectedVersion: 2, events: [event(1), event(2)] },
        { streamId: 'org-9', expectedVersion: 'any', events: [event(3)] },
        { streamId: 'account-1', expectedVersion: 5, events: [] },
        { streamId: 'guard-1', expectedVersion: 'any', events: [] },
      ],
      newId,
    );
    expect(request.kind).toBe('records');
    const { records, checks } = request as Extract<typeof request, { kind: 'records' }>;
    expect(records.map((r) => [r.streamName, (r.record.data as { n: number }).n])).toEqual([
      ['portcullis/user-1', 1],
      ['portcullis/user-1', 2],
      ['portcullis/org-9', 3],
    ]);
    expect(checks).toEqual([
      { type: 'stream_state', streamName: 'portcullis/user-1', expectedState: 1n },
      { type: 'stream_state', streamName: 'portcullis/account-1', expectedState: 4n },
    ]);
  });
});

describe('positions', () => {
  it('numbers an event by its prepare position, which tells the events of one append apart', () => {
    const oneAppend = [
      { commit: 1000n, prepare: 1000n },
      { commit: 1000n, prepare: 1210n },
      { commit: 1000n, prepare: 1433n },
    ];
    const next = { commit: 1600n, prepare: 1600n };
    const ours = [...oneAppend, next].map(positionOf);
    expect(ours).toEqual([1000, 1210, 1433, 1600]);
    expect(new Set(ours).size).toBe(ours.length);
  });

  it('refuses a position a JavaScript number cannot hold exactly', () => {
    expect(() => positionOf({ commit: 2n ** 53n, prepare: 2n ** 53n })).toThrow(/2\^53/);
  });

  it('resumes from the commit of the checkpoint\'s append when known, and from far enough back when not', () => {
    expect(readFrom(0)).toBe('start');
    expect(readFrom(1210, 1000n)).toEqual({ commit: 1000n, prepare: 1000n });
    expect(readFrom(1210)).toEqual({ commit: 0n, prepare: 0n });
    const far = 10 * COMMIT_LOOKBACK_BYTES;
    expect(readFrom(far)).toEqual({ commit: BigInt(far - COMMIT_LOOKBACK_BYTES), prepare: BigInt(far - COMMIT_LOOKBACK_BYTES) });
  });

  it('drops what a resumed read returns at or before the checkpoint, and keeps the rest of its append', () => {
    // A projection checkpointed at the middle event of an append: resuming from the append's commit position
    // returns all three, and only the last is new to it.
    const after = 1210;
    const returned = [1000n, 1210n, 1433n, 1600n].map((prepare) => ({ commit: prepare === 1600n ? 1600n : 1000n, prepare }));
    expect(returned.filter((p) => placeInRange(p, { after, until: Number.MAX_SAFE_INTEGER }) === 'in').map(positionOf)).toEqual([1433, 1600]);
  });

  it('looks each asked position up once, in $all order, and none that cannot be a position', () => {
    expect(positionsToRead([1600, 1210, 1600, 0, -3, 1.5, 1433])).toEqual([1210, 1433, 1600]);
    expect(positionsToRead([])).toEqual([]);
  });

  it('reads one position as the one stretch that holds only it: the event at it is in, its append\'s others are not', () => {
    const read = onePositionRead(1433);
    expect(read.limit).toBe(1);
    const returned = [1000n, 1210n, 1433n, 1600n].map((prepare) => ({ commit: 1000n, prepare }));
    expect(returned.map((p) => placeInRange(p, read))).toEqual(['before', 'before', 'in', 'past']);
  });

  it('places each event a resumed read returns before, in or past a stretch of positions (a lag counted, a range read)', () => {
    // A checkpoint at the middle event of an append, a head read at the next append's first event.
    const range = { after: 1210, until: 1600 };
    const returned = [1000n, 1210n, 1433n, 1600n, 1790n].map((prepare) => ({ commit: prepare < 1600n ? 1000n : 1600n, prepare }));
    expect(returned.map((p) => placeInRange(p, range))).toEqual(['before', 'before', 'in', 'in', 'past']);
    // An empty stretch (a projection at the head): nothing is in it.
    expect(returned.map((p) => placeInRange(p, { after: 1600, until: 1600 }))).not.toContain('in');
  });
});

describe('metadata', () => {
  const metadata: EventMetadata = {
    occurredAt: '2026-01-02T03:04:05.678Z',
    actor: { kind: 'user', id: 'u1' },
    actorId: 'u1',
    ipAddress: null,
    requestId: 'req-1',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  };

  it('is a flat object of strings, as a multi-stream append requires, each field its JSON', () => {
    const encoded = encodeMetadata(metadata);
    expect(Object.values(encoded).every((value) => typeof value === 'string')).toBe(true);
    expect(encoded.occurredAt).toBe('"2026-01-02T03:04:05.678Z"');
    expect(JSON.parse(encoded.actor!)).toEqual({ kind: 'user', id: 'u1' });
    expect(encoded.ipAddress).toBe('null');
    expect(encodeMetadata({ occurredAt: 'x', userAgent: undefined })).toEqual({ occurredAt: '"x"' });
  });

  it('reads back exactly what was written, without what KurrentDB adds of its own', () => {
    const stored = { ...encodeMetadata(metadata), '$schema.data-format': 'Json', '$schema.name': 'user.registered.v1' };
    expect(decodeMetadata(stored)).toEqual(metadata);
  });

  it('refuses a field KurrentDB would take for its own, and an event without a metadata object', () => {
    expect(() => encodeMetadata({ occurredAt: 'x', $correlationId: 'c' } as EventMetadata)).toThrow(/\$correlationId/);
    expect(() => decodeMetadata(undefined)).toThrow(/metadata/);
    expect(() => decodeMetadata(new Uint8Array([1]))).toThrow(/metadata/);
    expect(() => decodeMetadata({ actorId: '"u1"' })).toThrow();
  });

  it('takes a field another tool wrote as a bare string as that string', () => {
    expect(decodeMetadata({ occurredAt: '2026-01-02T03:04:05.678Z', requestId: 'r-1' })).toEqual({ occurredAt: '2026-01-02T03:04:05.678Z', requestId: 'r-1' });
  });
});

describe('recorded events', () => {
  const record: KurrentRecord = {
    streamId: 'portcullis/user-42',
    id: '0e2c63b4-0f1b-4e2f-9d0b-5ac1e5b1a001',
    revision: 2n,
    type: 'user.registered.v1',
    isJson: true,
    data: { userId: '42' },
    metadata: encodeMetadata({ occurredAt: '2026-01-02T03:04:05.678Z', actorId: null }),
    created: new Date('2026-01-02T03:04:06.000Z'),
    position: { commit: 5000n, prepare: 5120n },
  };

  it('is ours with our stream id, version, position and metadata', () => {
    expect(toRecordedEvent(names, record)).toEqual({
      position: 5120,
      eventId: record.id,
      streamId: 'user-42',
      streamVersion: 3,
      type: 'user.registered.v1',
      data: { userId: '42' },
      metadata: { occurredAt: '2026-01-02T03:04:05.678Z', actorId: null },
      recordedAt: record.created,
    });
  });

  it('is skipped when it is another log\'s or the server\'s, and refused when not written as ours', () => {
    expect(toRecordedEvent(names, { ...record, streamId: 'elsewhere/user-42' })).toBeNull();
    expect(toRecordedEvent(names, { ...record, streamId: '$scavenges' })).toBeNull();
    expect(() => toRecordedEvent(names, { ...record, isJson: false })).toThrow(/not JSON/);
    expect(() => toRecordedEvent(names, { ...record, position: undefined })).toThrow(/position/);
  });
});

describe('event ids', () => {
  it('compares a pasted id with the lower-case ids the server hands back, and names nothing by what is no uuid', () => {
    const id = '0e2c63b4-0f1b-4e2f-9d0b-5ac1e5b1a001';
    expect(eventIdKey(id)).toBe(id);
    expect(eventIdKey(id.toUpperCase())).toBe(id);
    for (const notAnId of ['', '42', 'user-42', `${id}0`, ` ${id}`]) expect(eventIdKey(notAnId)).toBeNull();
  });
});

describe('errors', () => {
  const writes: StreamWrite[] = [
    { streamId: 'user-1', expectedVersion: 3, events: [] },
    { streamId: 'email-a', expectedVersion: 'no_stream', events: [] },
  ];

  it('turns a revision conflict into our WrongExpectedVersionError, in our ids and counts', () => {
    const conflict = KurrentWrongExpectedVersionError.fromRevisionConflict({ stream: 'portcullis/user-1', expectedRevision: '2', actualRevision: '4' });
    const failure = classifyFailure(names, conflict, writes);
    expect(failure.kind).toBe('conflict');
    const error = (failure as { error: WrongExpectedVersionError }).error;
    expect(error).toBeInstanceOf(WrongExpectedVersionError);
    expect(error).toMatchObject({ streamId: 'user-1', expected: 3, actual: 5 });

    const taken = KurrentWrongExpectedVersionError.fromRevisionConflict({ stream: 'portcullis/email-a', expectedRevision: '-1', actualRevision: '0' });
    expect((classifyFailure(names, taken, writes) as { error: WrongExpectedVersionError }).error).toMatchObject({
      streamId: 'email-a',
      expected: 'no_stream',
      actual: 1,
    });
  });

  it('turns a failed consistency check into the same conflict', () => {
    const violation = new AppendConsistencyViolationError(undefined as never, {
      violationsList: [{ checkIndex: 0, streamState: { stream: 'portcullis/user-1', expectedState: '2', actualState: '-1' } }],
    });
    expect((classifyFailure(names, violation, writes) as { error: WrongExpectedVersionError }).error).toMatchObject({
      streamId: 'user-1',
      expected: 3,
      actual: 0,
    });
  });

  it('retries where the leader moved, never resends an append that may have landed, and names the rest', () => {
    const notLeader = new NotLeaderError({ metadata: { 'leader-endpoint-host': 'node-2', 'leader-endpoint-port': '2113' } } as never);
    expect(classifyFailure(names, notLeader)).toEqual({ kind: 'retry', appendMayHaveLanded: false });
    expect(classifyFailure(names, new UnavailableError(undefined as never))).toEqual({ kind: 'retry', appendMayHaveLanded: true });
    expect(classifyFailure(names, new AccessDeniedError(undefined as never))).toEqual({ kind: 'denied' });
    expect(classifyFailure(names, StreamDeletedError.fromStreamName('portcullis/user-1'))).toEqual({ kind: 'deleted', streamName: 'portcullis/user-1' });
    expect(classifyFailure(names, new StreamTombstonedError(undefined as never, { stream: 'portcullis/user-1' }))).toEqual({
      kind: 'deleted',
      streamName: 'portcullis/user-1',
    });
    expect(classifyFailure(names, new UnknownError(undefined as never))).toEqual({ kind: 'other' });
    expect(classifyFailure(names, new Error('socket hang up'))).toEqual({ kind: 'other' });
  });

  it('classifies what gRPC itself rejects with as the client would (a multi-stream append to an unreachable node)', () => {
    // As @grpc/grpc-js rejects a call that found no connection: status 14, UNAVAILABLE.
    const unreachable = Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14, details: 'No connection established' });
    expect(classifyFailure(names, unreachable)).toEqual({ kind: 'retry', appendMayHaveLanded: true });
  });
});
