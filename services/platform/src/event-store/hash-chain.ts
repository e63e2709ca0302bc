import { createHash, type KeyObject } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { sql } from '../database/pool.ts';
import { ed25519PublicKeyPem, ed25519Sign, ed25519Verify } from '../crypto/ed25519.ts';

/** The hash before the first event (see the hash-chain migration). */
export const GENESIS_HASH = '0'.repeat(64);

/** A point of the log: its last position and the chain's hash there (hex). */
export interface LogHead {
  readonly logId: string;
  readonly position: number;
  readonly hash: string;
}

/** A head as exported: signed when the deployment has AUDIT_SIGNING_KEY. */
export interface ExportedHead extends LogHead {
  readonly exportedAt: string;
  readonly signature: { readonly algorithm: 'Ed25519'; readonly publicKey: string; readonly value: string } | null;
}

type ChainProblem =
  /** The event's stored hash is not the chain's over its stored bytes: it, or its hash, was changed. */
  | 'altered'
  /** No event holds this position, though a later one does or the head says there should be one. */
  | 'missing'
  /** The log at the signed head's position has another hash: the history up to there was rewritten. */
  | 'diverged'
  /** The signed head's signature does not hold (or names another log). */
  | 'bad-signature';

export interface ChainVerdict {
  readonly ok: boolean;
  /** Events checked. */
  readonly checked: number;
  /** The last position that verified (0 before the first). */
  readonly verifiedTo: number;
  readonly head: LogHead;
  /** The first position whose hash does not hold, and why. */
  readonly failure: { readonly position: number; readonly problem: ChainProblem } | null;
  /** How many events the chain covers at `head`, where positions do not count them (the chain table on KurrentDB). */
  readonly events?: number;
}

function signedBytes(head: LogHead): Buffer {
  // The fields in a fixed order, so the signature covers exactly what a reader compares.
  return Buffer.from(JSON.stringify(['portcullis-log-head', head.logId, head.position, head.hash]), 'utf8');
}

/**
 * One step of the chain: the hash after an event, from the hash before it and the event's canonical text.
 * Postgres's append, the chainer and every verifier agree on this one step.
 */
export function chainStep(previous: Buffer, canonical: string): Buffer<ArrayBuffer> {
  return createHash('sha256').update(previous).update(canonical, 'utf8').digest();
}

/** The log's head as the head row records it (the position and hash the last append left). */
export async function readLogHead(db: CommonQueryMethods): Promise<LogHead> {
  const row = (await db.one(sql.unsafe`
    SELECT (SELECT id::text FROM event_log_identity) AS log_id, position::text AS position, encode(hash, 'hex') AS hash
    FROM event_log_head`)) as { log_id: string; position: string; hash: string };
  return { logId: row.log_id, position: Number(row.position), hash: row.hash };
}

/** A head as exported, signed with `signingKey` when there is one. */
export function signHead(head: LogHead, signingKey: KeyObject | null, now: Date = new Date()): ExportedHead {
  const signature = signingKey
    ? { algorithm: 'Ed25519' as const, publicKey: ed25519PublicKeyPem(signingKey), value: ed25519Sign(signingKey, signedBytes(head)) }
    : null;
  return { ...head, exportedAt: now.toISOString(), signature };
}

/** Whether an exported head's signature holds, by the public key it names or, better, one the reader trusts. */
export function headSignatureHolds(head: ExportedHead, trustedPublicKey?: string): boolean {
  if (!head.signature) return false;
  return ed25519Verify(trustedPublicKey ?? head.signature.publicKey, signedBytes(head), head.signature.value);
}

export interface VerifyOptions {
  /** A head exported earlier: the log must still reach it with the same hash. */
  readonly signedHead?: ExportedHead;
  /** The public key the signed head must verify with (else the one it carries, which proves less). */
  readonly trustedPublicKey?: string;
  readonly pageSize?: number;
  readonly onProgress?: (checked: number, total: number) => void;
}

interface ChainRow {
  readonly position: string;
  readonly hash: string;
  readonly canonical: string;
}

/**
 * Walks the whole log in position order, recomputing each event's hash from the previous one and the
 * event's canonical bytes as stored (the same function the append hashed), and reports the first position
 * that does not hold. Then the tail: the head row, and a signed head if given, must be reached.
 * Reads in pages by position, so memory stays flat whatever the log's length.
 */
export async function verifyChain(db: CommonQueryMethods, options: VerifyOptions = {}): Promise<ChainVerdict> {
  const head = await readLogHead(db);
  const pageSize = options.pageSize ?? 5000;
  const signed = options.signedHead;
  const total = Math.max(head.position, signed?.position ?? 0);
  let previous = Buffer.from(GENESIS_HASH, 'hex');
  let expected = 1;
  let checked = 0;
  const hashAt = new Map<number, string>();
  const verdict = (failure: ChainVerdict['failure']): ChainVerdict => ({ ok: failure === null, checked, verifiedTo: expected - 1, head, failure });

  if (signed) {
    if (signed.logId !== head.logId || !headSignatureHolds(signed, options.trustedPublicKey)) {
      return verdict({ position: signed.position, problem: 'bad-signature' });
    }
  }
  for (;;) {
    const rows = (await db.any(sql.unsafe`
      SELECT position::text AS position, encode(hash, 'hex') AS hash,
             portcullis_event_canonical(position, event_id, stream_id, stream_version, type, data, metadata, recorded_at) AS canonical
      FROM events WHERE events.position >= ${expected} ORDER BY events.position LIMIT ${pageSize}`)) as readonly ChainRow[];
    if (rows.length === 0) break;
    for (const row of rows) {
      const position = Number(row.position);
      if (position !== expected) return verdict({ position: expected, problem: 'missing' });
      const computed = chainStep(previous, row.canonical);
      if (computed.toString('hex') !== row.hash) return verdict({ position, problem: 'altered' });
      if (signed && position === signed.position) hashAt.set(position, row.hash);
      previous = computed;
      expected += 1;
      checked += 1;
    }
    options.onProgress?.(checked, total);
  }
  // Every event there is verified; now whether the log still reaches where it was said to.
  if (head.position >= expected) return verdict({ position: expected, problem: 'missing' });
  if (head.position === expected - 1 && head.position > 0 && head.hash !== previous.toString('hex')) {
    return verdict({ position: head.position, problem: 'altered' });
  }
  if (signed) {
    if (signed.position >= expected) return verdict({ position: expected, problem: 'missing' });
    const at = signed.position === 0 ? GENESIS_HASH : hashAt.get(signed.position);
    if (at !== signed.hash) return verdict({ position: signed.position, problem: 'diverged' });
  }
  return verdict(null);
}
