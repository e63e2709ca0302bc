import * as nodeCrypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPersonalDataCipher } from './personal-data-cipher.ts';
import { openSealedBatch, SealedValueOpener } from './sealed-values.ts';

const cipher = createPersonalDataCipher('sealed-values-spec-secret-sealed-values-spec');

/** `count` values sealed under two subjects' keys, with the keys beside them. */
function sealedValues(count: number) {
  const keys = [cipher.newDataKey(), cipher.newDataKey()];
  const values: string[] = [];
  const keyOfValue: Buffer[] = [];
  for (let index = 0; index < count; index += 1) {
    const subject = index % 2;
    values.push(cipher.encrypt(`u:user-${subject}`, keys[subject]!, `203.0.113.${index % 256}`));
    keyOfValue.push(keys[subject]!);
  }
  return { keys, values, keyOfValue };
}

describe('opening sealed values in batches', () => {
  it('opens a replay-sized batch on the worker thread exactly as one value at a time, and an altered or foreign value as null', async () => {
    const { keys, values, keyOfValue } = sealedValues(2_000);
    const tampered = `${values[7]!.slice(0, -2)}${values[7]!.endsWith('AA') ? 'BB' : 'AA'}`;
    values[7] = tampered;
    values[9] = 'plain text, never sealed';
    keyOfValue[11] = keys[0]!.subarray(0).map((byte) => byte ^ 1) as Buffer;
    const opened = await cipher.decryptAll(values, keyOfValue);
    expect(opened).toHaveLength(values.length);
    expect(opened[7]).toBeNull();
    expect(opened[9]).toBeNull();
    expect(opened[11]).toBeNull();
    for (const [index, value] of values.entries()) {
      if (index === 7 || index === 9 || index === 11) continue;
      expect(opened[index]).toBe(`203.0.113.${index % 256}`);
      // One value alone is opened in place: the same plaintext as the worker's.
      expect(opened[index]).toBe((await cipher.decryptAll([value], [keyOfValue[index]!]))[0]);
    }
  });

  it('answers every batch posted at once, each its own, in the order posted', async () => {
    const opener = new SealedValueOpener(nodeCrypto);
    try {
      const batches = [3, 600, 1].map((count) => {
        const key = cipher.newDataKey();
        const sealed = Array.from({ length: count }, (_, index) => cipher.encrypt('u:ordered', key, `value ${count}-${index}`).split('.').at(-1)!);
        return { keys: [key], sealed, associatedData: sealed.map(() => 'u:ordered'), keyOf: sealed.map(() => 0) };
      });
      const opened = await Promise.all(batches.map((batch) => opener.open(batch)));
      expect(opened.map((values) => values.at(-1))).toEqual(['value 3-2', 'value 600-599', 'value 1-0']);
    } finally {
      await opener.close();
    }
  });

  it('opens in place once its worker is stopped, so a read never fails for the want of it', async () => {
    const opener = new SealedValueOpener(nodeCrypto);
    const key = cipher.newDataKey();
    const sealed = cipher.encrypt('u:closed', key, 'still readable').split('.').at(-1)!;
    const batch = { keys: [key], sealed: [sealed], associatedData: ['u:closed'], keyOf: [0] };
    expect(await opener.open(batch)).toEqual(['still readable']);
    await opener.close();
    expect(await opener.open(batch)).toEqual(['still readable']);
    expect(openSealedBatch(nodeCrypto, batch)).toEqual(['still readable']);
  });
});
