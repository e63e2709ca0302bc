import { describe, expect, it } from 'vitest';
import { ERASED, streams } from '@portcullis/contracts';
import { createPersonalDataCipher } from '../crypto/personal-data-cipher.ts';
import type { DataKeys } from './data-keys.ts';
import { PersonalData, type EventBody } from './personal-data.ts';

/** Keys in a Map, with what was asked of them counted: the codec's behaviour without a database. */
class MemoryKeys implements DataKeys {
  readonly keys = new Map<string, Buffer | null>();
  writes = 0;
  constructor(private readonly cipher = createPersonalDataCipher('unit-spec-secret-0123456789abcdefghij')) {}
  async keysForWriting(ids: readonly string[]): Promise<ReadonlyMap<string, Buffer | null>> {
    this.writes += 1;
    for (const id of ids) if (!this.keys.has(id)) this.keys.set(id, this.cipher.newDataKey());
    return new Map(ids.map((id) => [id, this.keys.get(id)!]));
  }
  async keysForReading(ids: readonly string[]): Promise<ReadonlyMap<string, Buffer | null>> {
    return new Map(ids.map((id) => [id, this.keys.get(id) ?? null]));
  }
  async erase(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.keys.set(id, null);
  }
  forget(): void {}
  async close(): Promise<void> {}
}

const secret = 'unit-spec-secret-0123456789abcdefghij';
const registered: EventBody = {
  type: 'user.registered.v1',
  data: { userId: 'u1', email: 'alice@example.com', name: 'Alice', image: null, emailVerified: false },
  metadata: { occurredAt: '2026-01-01T00:00:00.000Z', ipAddress: '203.0.113.7', userAgent: 'Firefox', requestId: 'r1' },
};

function codec(): { personalData: PersonalData; keys: MemoryKeys } {
  const keys = new MemoryKeys();
  return { personalData: new PersonalData(createPersonalDataCipher(secret), keys), keys };
}

describe('personal data in events (crypto-shredding)', () => {
  it('stores the declared fields and the client address encrypted, and reads them back', async () => {
    const { personalData } = codec();
    const stored = await personalData.encode(registered);
    const text = JSON.stringify(stored);
    for (const plain of ['alice@example.com', 'Alice', '203.0.113.7', 'Firefox']) expect(text).not.toContain(plain);
    expect(stored.data).toMatchObject({ userId: 'u1', image: null, emailVerified: false });
    expect(stored.metadata.requestId).toBe('r1');
    expect(registered.data).toMatchObject({ email: 'alice@example.com' });
    const [read] = await personalData.decode([stored]);
    expect(read).toEqual(registered);
  });

  it('reads every protected value of an erased subject as the marker, and plaintext stored before as it is', async () => {
    const { personalData, keys } = codec();
    const stored = await personalData.encode(registered);
    await keys.erase(personalData.erasedBy({ type: 'user.deleted.v1', data: { userId: 'u1', email: 'alice@example.com' } }));
    const [erased, legacy] = await personalData.decode([stored, registered]);
    expect(erased!.data).toEqual({ userId: 'u1', email: ERASED, name: ERASED, image: null, emailVerified: false });
    expect(erased!.metadata).toMatchObject({ ipAddress: ERASED, userAgent: ERASED, requestId: 'r1' });
    expect(legacy).toEqual(registered);
  });

  it('keys an invitation to an address by the address, which the deletion of a user holding it erases', async () => {
    const { personalData, keys } = codec();
    const invitation: EventBody = {
      type: 'organization.invitation_created.v1',
      data: { organizationId: 'o1', invitationId: 'i1', email: 'bob@example.com', role: 'member', teamId: null, inviterId: 'u1', expiresAt: 'x' },
      metadata: { occurredAt: '2026-01-01T00:00:00.000Z', actor: { kind: 'user', id: 'u1' }, ipAddress: '198.51.100.1' },
    };
    const stored = await personalData.encode(invitation);
    await keys.erase(personalData.erasedBy({ type: 'user.deleted.v1', data: { userId: 'u2', email: 'BOB@example.com' } }));
    const [read] = await personalData.decode([stored]);
    expect(read!.data).toMatchObject({ email: ERASED, inviterId: 'u1' });
    // The inviter's own address is the inviter's, erased only with them.
    expect(read!.metadata.ipAddress).toBe('198.51.100.1');
  });

  it('names address streams by a keyed hash, stable for a secret and leaving ids alone', () => {
    const { personalData } = codec();
    const named = personalData.storedStreamId(streams.email('alice@example.com'));
    expect(named).toMatch(/^email-hmac-[0-9a-f]{64}$/);
    expect(personalData.storedStreamId(streams.email('Alice@Example.com'))).toBe(named);
    expect(personalData.storedStreamId(named)).toBe(named);
    expect(personalData.storedStreamId(streams.signIn('alice@example.com'))).toMatch(/^sign-in-hmac-/);
    expect(personalData.storedStreamId(streams.usernameSignIn('alice'))).toMatch(/^sign-in-username-hmac-/);
    expect(personalData.storedStreamId(streams.accountSignIn('u1'))).toBe('sign-in-account-u1');
    expect(personalData.storedStreamId(streams.user('u1'))).toBe('user-u1');
    const other = new PersonalData(createPersonalDataCipher('another-secret-0123456789abcdefghijkl'), new MemoryKeys());
    expect(other.storedStreamId(streams.email('alice@example.com'))).not.toBe(named);
  });

  it('encrypts every personal field of one nested record (an invitation mail names its inviter twice)', async () => {
    const { personalData } = codec();
    const mail: EventBody = {
      type: 'mail.job_queued.v1',
      data: { kind: 'invitation', userId: 'u1', to: 'bob@example.com', invitation: { inviterName: 'Alice', inviterEmail: 'alice@example.com', role: 'member' } },
      metadata: { occurredAt: '2026-01-01T00:00:00.000Z' },
    };
    const stored = await personalData.encode(mail);
    const text = JSON.stringify(stored);
    for (const plain of ['bob@example.com', 'Alice', 'alice@example.com']) expect(text).not.toContain(plain);
    expect(stored.data).toMatchObject({ invitation: { role: 'member' } });
    expect(mail.data).toMatchObject({ invitation: { inviterName: 'Alice' } });
    expect(await personalData.decode([stored])).toEqual([mail]);
  });

  it('opens only the values an event was read with', async () => {
    const { personalData } = codec();
    const stored = await personalData.encode(registered);
    const narrowed = { ...stored, data: { userId: 'u1' }, metadata: { occurredAt: stored.metadata.occurredAt, ipAddress: stored.metadata.ipAddress } };
    const [read] = await personalData.decode([narrowed]);
    expect(read).toEqual({ ...narrowed, metadata: { occurredAt: registered.metadata.occurredAt, ipAddress: '203.0.113.7' } });
  });

  it('asks for the keys of every subject of an append at once', async () => {
    const { personalData, keys } = codec();
    const second: EventBody = { ...registered, data: { ...(registered.data as object), userId: 'u2', email: 'bob@example.com' } };
    const stored = await personalData.encodeAll([registered, second]);
    expect(keys.writes).toBe(1);
    expect(await personalData.decode(stored)).toEqual([registered, second]);
  });

  it('seals a value once for an append, every copy opening, and afresh in the next append', async () => {
    const { personalData } = codec();
    const renamed: EventBody = { ...registered, type: 'user.updated.v1', data: { userId: 'u1', name: 'Alicia' } };
    const [first, second] = await personalData.encodeAll([registered, renamed]);
    expect(second!.metadata.ipAddress).toBe(first!.metadata.ipAddress);
    expect(second!.metadata.userAgent).toBe(first!.metadata.userAgent);
    const [again] = await personalData.encodeAll([registered]);
    expect(again!.metadata.ipAddress).not.toBe(first!.metadata.ipAddress);
    expect(await personalData.decode([first!, second!, again!])).toEqual([registered, renamed, registered]);
  });

  it('writes the marker, not plaintext, for a user whose key is already gone', async () => {
    const { personalData, keys } = codec();
    keys.keys.set('u:u1', null);
    const stored = await personalData.encode(registered);
    expect(stored.data).toMatchObject({ email: ERASED, name: ERASED });
  });

  it('does not open a value moved under another subject', async () => {
    const { personalData, keys } = codec();
    const stored = await personalData.encode(registered);
    const cipher = createPersonalDataCipher(secret);
    const email = (stored.data as { email: string }).email;
    const moved = email.replace(/^pd1\.[^.]+\./, `pd1.${Buffer.from('u:u2').toString('base64url')}.`);
    await keys.keysForWriting(['u:u2']);
    expect(await cipher.decryptAll([moved, moved], [keys.keys.get('u:u2')!, keys.keys.get('u:u1')!])).toEqual([null, null]);
  });
});
