import { createKeyWrapping, createPersonalDataCipher, derivedAddressNamingKey } from '../crypto/personal-data-cipher.ts';
import type { SecretRing } from '../crypto/secret-ring.ts';
import type { DatabasePool } from '../database/pool.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { ProtectedEventStore } from '../event-store/protected-event-store.ts';
import { PostgresDataKeys } from './data-keys.ts';
import { Eraser } from './erasure.ts';
import { PersonalData } from './personal-data.ts';

export { PersonalData, type EventBody } from './personal-data.ts';
export { ADDRESS_NAMING_SUBJECT, KeyOutsideRingError, keysErasedIn, PostgresDataKeys } from './data-keys.ts';
export { DataKeyRotation, dataKeyWrappingStatus, rewrapDataKeys, type RewrapProgress, type RewrapResult, type WrappingStatus } from './rewrap.ts';
export { auditAddressesErasure, Eraser } from './erasure.ts';
export { carryAddressStreamsForward } from './address-streams.ts';
export { ProtectedEventStore } from '../event-store/protected-event-store.ts';
export { SEALED_SNAPSHOT_SUFFIX } from './sealed-snapshots.ts';

export interface ProtectedLog {
  readonly store: ProtectedEventStore;
  readonly personalData: PersonalData;
  readonly eraser: Eraser;
  /** Closes the keys' pool and the cipher's worker (the store and the pool given stay their owners'). */
  close(): Promise<void>;
}

/**
 * The log as every service reads and writes it: `store` with personal data encrypted under per-subject keys
 * wrapped under the ring's secrets (`config.secrets`), and a user's deletion erasing them (see
 * `PersonalData`, `Eraser`). Reads the address-naming key (made on a database's first start).
 */
export async function protectPersonalData(
  store: EventStore,
  options: {
    readonly databaseUrl: string;
    readonly secrets: SecretRing;
    readonly pool: DatabasePool;
    /** Connections of the data keys' own pool (`DATA_KEYS_POOL_MAX`). */
    readonly keysPoolSize?: number;
    readonly keyCacheTtlMs?: number;
    /** Where an erasure is told besides Postgres (see `PostgresDataKeysOptions.announce`). */
    readonly announceErasure?: (notice: string) => Promise<unknown>;
    /**
     * An erasure that failed after its deletion was appended: the deletion stands (the command must not
     * answer as if it had not happened), and the projector's erasure projection completes it.
     */
    readonly onErasureError?: (error: unknown) => void;
  },
): Promise<ProtectedLog> {
  // The keys are opened by the same wrapping whatever names addresses, and the naming key is one of them.
  const wrapping = createKeyWrapping(options.secrets);
  const keys = new PostgresDataKeys({
    databaseUrl: options.databaseUrl,
    cipher: wrapping,
    ...(options.keysPoolSize !== undefined ? { maximumPoolSize: options.keysPoolSize } : {}),
    ...(options.keyCacheTtlMs !== undefined ? { cacheTtlMs: options.keyCacheTtlMs } : {}),
    ...(options.announceErasure ? { announce: options.announceErasure } : {}),
  });
  let addressNamingKey: Buffer;
  try {
    addressNamingKey = await keys.addressNamingKey(derivedAddressNamingKey(options.secrets));
  } catch (error) {
    await keys.close();
    throw error;
  }
  const cipher = createPersonalDataCipher(options.secrets, addressNamingKey);
  const personalData = new PersonalData(cipher, keys);
  const eraser = new Eraser(options.pool, personalData, store);
  return {
    store: new ProtectedEventStore(store, personalData, async (event) => {
      try {
        await eraser.erase(event);
      } catch (error) {
        if (!options.onErasureError) throw error;
        options.onErasureError(error);
      }
    }),
    personalData,
    eraser,
    close: async () => {
      await keys.close();
      await cipher.close();
    },
  };
}
