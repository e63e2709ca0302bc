import type { KeyObject } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { sql } from '../database/pool.ts';
import type { EventStore, RecordedEvent } from './event-store.ts';
import { chainStep, signHead, readLogHead, verifyChain, headSignatureHolds, GENESIS_HASH, type ChainVerdict, type ExportedHead, type LogHead, type VerifyOptions } from './hash-chain.ts';

/**
 * A JSON value as Postgres's jsonb prints it (`jsonb::text`), which is what the in-table chain hashes
 * (`portcullis_event_canonical`): object keys sorted shorter first, then by their UTF-8 bytes; `", "` and
 * `": "` between items; numbers in plain decimal notation. So a value hashes the same whichever engine
 * returned it and however it was sent. Fields holding `undefined` are left out, as JSON leaves them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return plainNumber(value);
    case 'string':
      // JSON's string escaping is jsonb's: `"`, `\`, the short forms of \b \f \n \r \t, other controls as \u00xx.
      return JSON.stringify(value);
    case 'object': {
      if (value instanceof Date) return JSON.stringify(value.toISOString());
      if (Array.isArray(value)) return `[${value.map((item: unknown) => canonicalJson(item)).join(', ')}]`;
      const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
      entries.sort(([a], [b]) => compareJsonbKeys(a, b));
      return `{${entries.map(([key, item]) => `${JSON.stringify(key)}: ${canonicalJson(item)}`).join(', ')}}`;
    }
    default:
      throw new TypeError(`a ${typeof value} has no JSON form`);
  }
}

function compareJsonbKeys(a: string, b: string): number {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length - right.length || Buffer.compare(left, right);
}

/** A finite number without an exponent (jsonb's numeric prints 1e21 as 1000000000000000000000, 1e-7 as 0.0000001). */
function plainNumber(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON form`);
  if (Object.is(value, -0)) return '0';
  const text = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, lead, fraction = '', exponentText] = match;
  const digits = `${lead}${fraction}`;
  const exponent = Number(exponentText);
  if (exponent >= 0) return `${sign}${digits.padEnd(exponent + 1, '0')}`;
  return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
}

/**
 * What the chain table hashes of an event: its fields as the port returns them, in a JSON array printed as
 * jsonb prints it: the in-table chain's form (`portcullis_event_canonical`) but for the instant, which the
 * port gives in milliseconds (Postgres keeps microseconds; KurrentDB stamps its own).
 */
export function chainedEventText(event: RecordedEvent): string {
  return canonicalJson([
    event.position,
    event.eventId,
    event.streamId,
    event.streamVersion,
    event.type,
    event.data,
    event.metadata,
    event.recordedAt.getTime(),
  ]);
}

/** The chain's hash after `event`, `previous` being the hash before it. */
export function chainedHash(previous: Buffer, event: RecordedEvent): Buffer {
  return chainStep(previous, chainedEventText(event));
}

/**
 * The hash chain of this log: where it has got to (the head export-head signs) and the walk that
 * recomputes it. Postgres's log chains itself in its own rows (`PostgresInTableChain`); a log that does not
 * (KurrentDB) is chained by the chainer into the chain table (`ChainTable`).
 */
export interface LogChain {
  /** The chain's head: the last position it covers and its hash there. */
  head(): Promise<LogHead>;
  /** How many events the chain covers (what a check's progress counts to). */
  length(): Promise<number>;
  /** Walks the chain from its start against the log's events and reports the first place that does not hold. */
  verify(options?: VerifyOptions): Promise<ChainVerdict>;
  /** The hash the chain holds at each of these positions (hex); one it does not cover yet (the chainer's lag) is left out. */
  hashesAt(positions: readonly number[]): Promise<ReadonlyMap<number, string>>;
  /** The event's link, recomputed from the event as stored and the hash before it; null where the log has no event. */
  linkAt(position: number): Promise<ChainLink | null>;
}

/** One event's link in the chain, as the audit trail shows it beside the event. */
export interface ChainLink {
  /** The position whose hash this link starts from (0: the chain's start). */
  readonly previousPosition: number;
  /** Null when the previous event is missing: the chain is broken here. */
  readonly previousHash: string | null;
  /** Null where the chain does not cover the event yet (the chainer's lag, KurrentDB only). */
  readonly hash: string | null;
  /** Whether `sha256(previous hash || the event's canonical bytes)` is the hash held: false for an event changed since. */
  readonly verifies: boolean;
}

function linkOf(previousPosition: number, previousHash: string | null, hash: string | null, canonical: () => string): ChainLink {
  const computed = previousHash === null || hash === null ? null : chainStep(Buffer.from(previousHash, 'hex'), canonical()).toString('hex');
  return { previousPosition, previousHash, hash, verifies: computed !== null && computed === hash };
}

async function hashRows(db: CommonQueryMethods, query: ReturnType<typeof sql.unsafe>): Promise<ReadonlyMap<number, string>> {
  const rows = (await db.any(query)) as ReadonlyArray<{ position: string; hash: string }>;
  return new Map(rows.map((row) => [Number(row.position), row.hash]));
}

/** Postgres's log: each event row carries its hash, the head row the last one (the hash-chain migration). */
export class PostgresInTableChain implements LogChain {
  constructor(private readonly db: CommonQueryMethods) {}

  head(): Promise<LogHead> {
    return readLogHead(this.db);
  }

  async length(): Promise<number> {
    return (await readLogHead(this.db)).position;
  }

  verify(options: VerifyOptions = {}): Promise<ChainVerdict> {
    return verifyChain(this.db, options);
  }

  hashesAt(positions: readonly number[]): Promise<ReadonlyMap<number, string>> {
    if (positions.length === 0) return Promise.resolve(new Map());
    return hashRows(this.db, sql.unsafe`
      SELECT position::text AS position, encode(hash, 'hex') AS hash FROM events WHERE position = ANY(${sql.array([...positions], 'int8')})`);
  }

  /** The canonical bytes drawn by the SQL function the append hashed with and `verifyChain` walks with. */
  async linkAt(position: number): Promise<ChainLink | null> {
    const row = (await this.db.maybeOne(sql.unsafe`
      SELECT encode(e.hash, 'hex') AS hash,
        portcullis_event_canonical(e.position, e.event_id, e.stream_id, e.stream_version, e.type, e.data, e.metadata, e.recorded_at) AS canonical,
        (SELECT encode(p.hash, 'hex') FROM events p WHERE p.position = e.position - 1) AS previous_hash
      FROM events e WHERE e.position = ${position}`)) as { hash: string; canonical: string; previous_hash: string | null } | null;
    if (row === null) return null;
    return linkOf(position - 1, position === 1 ? GENESIS_HASH : row.previous_hash, row.hash, () => row.canonical);
  }
}

interface ChainHeadRow {
  readonly position: string;
  readonly hash: string;
  readonly events: string;
}

/** The chain table's head row (the chainer's checkpoint). */
export async function readChainTableHead(db: CommonQueryMethods): Promise<{ position: number; hash: string; events: number }> {
  const row = (await db.one(sql.unsafe`
    SELECT position::text AS position, encode(hash, 'hex') AS hash, events::text AS events FROM log_chain_head`)) as ChainHeadRow;
  return { position: Number(row.position), hash: row.hash, events: Number(row.events) };
}

/**
 * The chain the chainer keeps in Postgres for a log that does not chain itself (`log_chain`, one hash per
 * event; `log_chain_head`). Verifying walks the table and the log's events (read through the port, as
 * stored) side by side: an event changed, a chained one gone (a cut tail among them) or one the chain does
 * not know below its head breaks it. Events after the head are not covered yet (the chainer's lag).
 */
export class ChainTable implements LogChain {
  constructor(
    private readonly db: CommonQueryMethods,
    private readonly store: Pick<EventStore, 'readAll' | 'logId' | 'eventsAt'>,
  ) {}

  hashesAt(positions: readonly number[]): Promise<ReadonlyMap<number, string>> {
    if (positions.length === 0) return Promise.resolve(new Map());
    return hashRows(this.db, sql.unsafe`
      SELECT position::text AS position, encode(hash, 'hex') AS hash FROM log_chain WHERE position = ANY(${sql.array([...positions], 'int8')})`);
  }

  /** Positions here are not contiguous: the link before is the chain's row before, or its start. */
  async linkAt(position: number): Promise<ChainLink | null> {
    const [[event], links] = await Promise.all([
      this.store.eventsAt([position]),
      this.db.any(sql.unsafe`
        (SELECT position::text AS position, encode(hash, 'hex') AS hash FROM log_chain WHERE position = ${position})
        UNION ALL
        (SELECT position::text AS position, encode(hash, 'hex') AS hash FROM log_chain WHERE position < ${position} ORDER BY position DESC LIMIT 1)`) as Promise<
        ReadonlyArray<{ position: string; hash: string }>
      >,
    ]);
    if (!event) return null;
    const own = links.find((link) => Number(link.position) === position);
    const previous = links.find((link) => Number(link.position) < position);
    return linkOf(previous ? Number(previous.position) : 0, previous ? previous.hash : GENESIS_HASH, own?.hash ?? null, () => chainedEventText(event));
  }

  async head(): Promise<LogHead> {
    const [head, logId] = await Promise.all([readChainTableHead(this.db), this.store.logId()]);
    return { logId, position: head.position, hash: head.hash };
  }

  async length(): Promise<number> {
    return (await readChainTableHead(this.db)).events;
  }

  async verify(options: VerifyOptions = {}): Promise<ChainVerdict> {
    const [stored, logId] = await Promise.all([readChainTableHead(this.db), this.store.logId()]);
    const head: LogHead = { logId, position: stored.position, hash: stored.hash };
    const pageSize = options.pageSize ?? 5000;
    const signed = options.signedHead;
    let previous: Buffer = Buffer.from(GENESIS_HASH, 'hex');
    let checked = 0;
    let verifiedTo = 0;
    let signedHash: string | undefined;
    const verdict = (failure: ChainVerdict['failure']): ChainVerdict => ({ ok: failure === null, checked, verifiedTo, head, failure, events: stored.events });

    if (signed && (signed.logId !== head.logId || !headSignatureHolds(signed, options.trustedPublicKey))) {
      return verdict({ position: signed.position, problem: 'bad-signature' });
    }
    const events = pagesOf((after) => this.store.readAll({ after, limit: pageSize, until: head.position }), (event) => event.position);
    const links = pagesOf(
      async (after) =>
        (await this.db.any(sql.unsafe`
          SELECT position::text AS position, encode(hash, 'hex') AS hash FROM log_chain
          WHERE position > ${after} AND position <= ${head.position} ORDER BY log_chain.position LIMIT ${pageSize}`)) as ReadonlyArray<{ position: string; hash: string }>,
      (link) => Number(link.position),
    );
    for (;;) {
      const [event, link] = await Promise.all([events.next(), links.next()]);
      if (event === null && link === null) break;
      // A chained event the log no longer holds (a cut tail ends here too).
      if (event === null || (link !== null && Number(link.position) < event.position)) return verdict({ position: Number(link!.position), problem: 'missing' });
      // An event the chain passed over: written into the history after the chainer went by.
      if (link === null || event.position < Number(link.position)) return verdict({ position: event.position, problem: 'altered' });
      const computed = chainedHash(previous, event);
      if (computed.toString('hex') !== link.hash) return verdict({ position: event.position, problem: 'altered' });
      previous = computed;
      checked += 1;
      verifiedTo = event.position;
      if (signed && event.position === signed.position) signedHash = link.hash;
      if (checked % pageSize === 0) options.onProgress?.(checked, stored.events);
    }
    options.onProgress?.(checked, stored.events);
    if (head.position !== verifiedTo || checked !== stored.events) return verdict({ position: head.position, problem: 'missing' });
    if (head.hash !== previous.toString('hex')) return verdict({ position: head.position, problem: 'altered' });
    if (signed) {
      if (signed.position > head.position) return verdict({ position: signed.position, problem: 'missing' });
      const at = signed.position === 0 ? GENESIS_HASH : signedHash;
      if (at !== signed.hash) return verdict({ position: signed.position, problem: 'diverged' });
    }
    return verdict(null);
  }
}

/** One item at a time of a sequence read in pages after the last item's position; null once it is over. */
function pagesOf<T>(readAfter: (after: number) => Promise<readonly T[]>, positionOf: (item: T) => number): { next(): Promise<T | null> } {
  let page: readonly T[] = [];
  let index = 0;
  let after = 0;
  let over = false;
  return {
    async next(): Promise<T | null> {
      if (index === page.length) {
        if (over) return null;
        page = await readAfter(after);
        index = 0;
        if (page.length === 0) {
          over = true;
          return null;
        }
        after = positionOf(page[page.length - 1]!);
      }
      return page[index++]!;
    },
  };
}

/**
 * The chain of the configured log: the in-table one on Postgres, the chain table on KurrentDB. `store` is
 * the log as stored (not `protectPersonalData`'s: the chain covers the ciphertext, and verifying opens nothing).
 */
export function openLogChain(settings: { readonly eventStoreUrl: string | null }, db: CommonQueryMethods, store: Pick<EventStore, 'readAll' | 'logId' | 'eventsAt'>): LogChain {
  return settings.eventStoreUrl === null ? new PostgresInTableChain(db) : new ChainTable(db, store);
}

/** The chain's head, signed with the configured key when there is one (`audit head`, GET /ops/audit/head's form). */
export async function exportChainHead(chain: LogChain, signingKey: KeyObject | null, now: Date = new Date()): Promise<ExportedHead> {
  return signHead(await chain.head(), signingKey, now);
}
