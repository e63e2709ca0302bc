import { describe, expect, it } from 'vitest';
import { canonicalJson, chainedEventText, chainedHash } from './log-chain.ts';
import type { RecordedEvent } from './event-store.ts';

const event: RecordedEvent = {
  position: 7,
  eventId: '0b8f3c8e-4a57-4c55-9a0e-6f1d2a3b4c5d',
  streamId: 'user-1',
  streamVersion: 2,
  type: 'user.signed-up.v1',
  data: { name: 'Ann', email: { sealed: 'x' } },
  metadata: { occurredAt: '2026-11-28T23:00:00.000Z', actor: { kind: 'user', id: 'u1' } } as unknown as RecordedEvent['metadata'],
  recordedAt: new Date('2026-11-28T23:00:00.123Z'),
};

describe('what the chain table hashes of an event', () => {
  it('prints JSON as jsonb does: keys shorter first then by bytes, fixed spacing, plain numbers', () => {
    expect(canonicalJson({ bb: 1, a: 2, ab: [true, null, 'x'], é: 0 })).toBe('{"a": 2, "ab": [true, null, "x"], "bb": 1, "é": 0}');
    expect(canonicalJson({ z: { y: {}, x: [] } })).toBe('{"z": {"x": [], "y": {}}}');
    expect(canonicalJson([1e21, 1.5e-7, -0, 0.1, -12.5, 123456789012])).toBe('[1000000000000000000000, 0.00000015, 0, 0.1, -12.5, 123456789012]');
    expect(canonicalJson('line\nquote" back\\ tab\t \u0001 ünï')).toBe('"line\\nquote\\" back\\\\ tab\\t \\u0001 ünï"');
    expect(canonicalJson({ kept: 1, dropped: undefined })).toBe('{"kept": 1}');
    expect(() => canonicalJson(Number.NaN)).toThrow();
  });

  it('does not depend on how the event was built: the order its fields came in changes nothing', () => {
    const reordered: RecordedEvent = { ...event, data: { email: { sealed: 'x' }, name: 'Ann' } };
    expect(chainedEventText(reordered)).toBe(chainedEventText(event));
    expect(chainedEventText(event)).toBe(
      '[7, "0b8f3c8e-4a57-4c55-9a0e-6f1d2a3b4c5d", "user-1", 2, "user.signed-up.v1", {"name": "Ann", "email": {"sealed": "x"}}, ' +
        '{"actor": {"id": "u1", "kind": "user"}, "occurredAt": "2026-11-28T23:00:00.000Z"}, 1795906800123]',
    );
  });

  it('covers every field the port returns: a change to any one changes the hash', () => {
    const genesis = Buffer.alloc(32);
    const hash = chainedHash(genesis, event).toString('hex');
    const changes: Array<Partial<RecordedEvent>> = [
      { position: 8 },
      { eventId: '0b8f3c8e-4a57-4c55-9a0e-6f1d2a3b4c5e' },
      { streamId: 'user-2' },
      { streamVersion: 3 },
      { type: 'user.signed-up.v2' },
      { data: { name: 'Anne', email: { sealed: 'x' } } },
      { metadata: { ...event.metadata, occurredAt: '2026-11-28T23:00:00.001Z' } },
      { recordedAt: new Date('2026-11-28T23:00:00.124Z') },
    ];
    for (const change of changes) expect(chainedHash(genesis, { ...event, ...change }).toString('hex'), Object.keys(change)[0]).not.toBe(hash);
    expect(chainedHash(Buffer.alloc(32, 1), event).toString('hex')).not.toBe(hash);
  });
});
