import { Worker } from 'node:worker_threads';

/**
 * A batch of AES-256-GCM sealed values to open: each value (`iv ‖ ciphertext ‖ tag`, as bytes or as their
 * base64url) with its associated data (a subject id) and the index of its key in `keys`.
 */
export interface SealedBatch {
  readonly keys: ReadonlyArray<Uint8Array | import('node:crypto').KeyObject>;
  readonly sealed: ReadonlyArray<Uint8Array | string>;
  readonly associatedData: readonly string[];
  readonly keyOf: ArrayLike<number>;
}

/**
 * Opens every value of `batch`: its plaintext, or null where it does not open (another key, altered). It is
 * self-contained, using nothing but its arguments and `Buffer`, so that the same source also runs as a worker
 * thread's (see `SealedValueOpener`): it must stay free of imports, outer names and named inner functions.
 */
export function openSealedBatch(crypto: typeof import('node:crypto'), batch: SealedBatch, as: 'text' | 'bytes' = 'text'): Array<string | Buffer | null> {
  const ivBytes = 12;
  const tagBytes = 16;
  const prepared: Array<import('node:crypto').KeyObject | undefined> = [];
  const opened: Array<string | Buffer | null> = [];
  for (let index = 0; index < batch.sealed.length; index += 1) {
    const item = batch.sealed[index]!;
    const bytes = typeof item === 'string' ? Buffer.from(item, 'base64url') : Buffer.from(item.buffer, item.byteOffset, item.byteLength);
    const keyIndex = batch.keyOf[index]!;
    let key = prepared[keyIndex];
    if (!key) {
      const given = batch.keys[keyIndex]!;
      key = given instanceof Uint8Array ? crypto.createSecretKey(given) : given;
      prepared[keyIndex] = key;
    }
    if (bytes.length < ivBytes + tagBytes) {
      opened.push(null);
      continue;
    }
    try {
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, bytes.subarray(0, ivBytes), { authTagLength: tagBytes });
      decipher.setAAD(Buffer.from(batch.associatedData[index]!, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - tagBytes));
      const plaintext = decipher.update(bytes.subarray(ivBytes, bytes.length - tagBytes));
      // GCM yields everything from update; final only checks the tag (and throws when it does not hold).
      decipher.final();
      opened.push(as === 'text' ? plaintext.toString('utf8') : plaintext);
    } catch {
      opened.push(null);
    }
  }
  return opened;
}

/** The worker's whole program: `openSealedBatch`'s own source, answering each batch posted in order. */
const WORKER_SOURCE = `
const crypto = require('node:crypto');
const { parentPort } = require('node:worker_threads');
const openSealedBatch = ${openSealedBatch.toString()};
parentPort.on('message', (batch) => parentPort.postMessage(openSealedBatch(crypto, batch, 'text')));
`;

/**
 * Opens large batches on a worker thread of its own, so that a replay decrypting a value per event (most of
 * its CPU once the rest was made lean) does so beside the thread that parses and writes. The worker starts
 * at the first batch and never keeps the process alive; if it fails, batches are opened in place.
 */
export class SealedValueOpener {
  private worker: Worker | null = null;
  private failed = false;
  /** Answered in the order posted: the worker handles one message at a time, in order. */
  private readonly waiting: Array<{ readonly batch: SealedBatch; readonly resolve: (opened: Array<string | null>) => void }> = [];

  constructor(private readonly crypto: typeof import('node:crypto')) {}

  /** The batch's values as text (null where one does not open). */
  open(batch: SealedBatch): Promise<Array<string | null>> {
    const worker = this.started();
    if (!worker) return Promise.resolve(this.inPlace(batch));
    return new Promise((resolve) => {
      this.waiting.push({ batch, resolve });
      worker.postMessage(batch);
    });
  }

  private inPlace(batch: SealedBatch): Array<string | null> {
    return openSealedBatch(this.crypto, batch, 'text') as Array<string | null>;
  }

  private started(): Worker | null {
    if (this.worker || this.failed) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.unref();
    worker.on('message', (opened: Array<string | null>) => this.waiting.shift()?.resolve(opened));
    // A worker that failed or was stopped leaves its batches to this thread: a read never fails for it.
    const stop = () => {
      this.failed = true;
      this.worker = null;
      for (const { batch, resolve } of this.waiting.splice(0)) resolve(this.inPlace(batch));
    };
    worker.on('error', stop);
    worker.on('exit', stop);
    this.worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.failed = true;
    this.worker = null;
    await worker?.terminate();
  }
}
