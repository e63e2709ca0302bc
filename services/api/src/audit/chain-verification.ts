import { randomUUID } from 'node:crypto';
import type { ChainVerification } from '@portcullis/contracts';
import { sql, type ChainVerdict, type DatabasePool, type LogChain, type VerifyOptions } from '@portcullis/platform';

/** How often a running check says it is alive, besides its progress. */
const HEARTBEAT_MS = 2000;
/** A running check silent this long died with its process. */
const STALE_AFTER = '30 seconds';

interface VerificationRow {
  readonly id: string;
  readonly source: ChainVerification['source'];
  readonly status: ChainVerification['status'];
  readonly started_at: number;
  readonly finished_at: number | null;
  readonly checked: string;
  readonly verified_to: string;
  readonly head: string | null;
  readonly failure_position: string | null;
  readonly failure_problem: NonNullable<ChainVerification['failure']>['problem'] | null;
  readonly error: string | null;
}

const COLUMNS = sql.fragment`id, source, status, started_at, finished_at, checked::text, verified_to::text, head::text,
  failure_position::text, failure_problem, error`;

function verificationOf(row: VerificationRow): ChainVerification {
  const checked = Number(row.checked);
  const head = row.head === null ? null : Number(row.head);
  const percent = row.status === 'intact' ? 100 : head === null ? null : head === 0 ? 100 : Math.min(100, Math.round((checked / head) * 1000) / 10);
  return {
    id: row.id,
    status: row.status,
    source: row.source,
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
    checked,
    verifiedTo: Number(row.verified_to),
    head,
    percent,
    failure: row.failure_position === null || row.failure_problem === null ? null : { position: Number(row.failure_position), problem: row.failure_problem },
    error: row.error,
  };
}

/** A check whose process stopped writing its progress is over: failed, as of its last sign of life. */
async function endAbandoned(pool: DatabasePool): Promise<void> {
  await pool.query(sql.unsafe`
    UPDATE chain_verifications SET status = 'failed', finished_at = progressed_at, error = 'the process running the check stopped'
    WHERE status = 'running' AND progressed_at < now() - ${STALE_AFTER}::interval`);
}

/** The latest check (the one under way, or the last to start) and the last that finished. */
export async function latestChainVerifications(pool: DatabasePool): Promise<{ latest: ChainVerification | null; lastFinished: ChainVerification | null }> {
  await endAbandoned(pool);
  const latest = (await pool.maybeOne(sql.unsafe`SELECT ${COLUMNS} FROM chain_verifications ORDER BY started_at DESC LIMIT 1`)) as VerificationRow | null;
  const lastFinished = (await pool.maybeOne(sql.unsafe`
    SELECT ${COLUMNS} FROM chain_verifications WHERE status <> 'running' ORDER BY started_at DESC LIMIT 1`)) as VerificationRow | null;
  return { latest: latest && verificationOf(latest), lastFinished: lastFinished && verificationOf(lastFinished) };
}

export interface StartedCheck {
  readonly verification: ChainVerification;
  /** False: another check was under way, and `verification` is it. */
  readonly started: boolean;
  /** The check's verdict, once it is over (absent when not started here). */
  readonly done?: Promise<ChainVerdict | null>;
}

/**
 * Starts walking the log's hash chain (`LogChain.verify`: the log's own rows on Postgres, the chain table on
 * KurrentDB) and records it in `chain_verifications`: when, from where, how far it got and what it found,
 * its progress written as it goes. One check at a time across every process: while one runs, this answers
 * it instead. `head` is the number of events the chain covers, which a check's progress counts to.
 */
export async function startChainVerification(
  pool: DatabasePool,
  chain: LogChain,
  source: ChainVerification['source'],
  options: Omit<VerifyOptions, 'onProgress'> & { readonly onProgress?: VerifyOptions['onProgress'] } = {},
): Promise<StartedCheck> {
  await endAbandoned(pool);
  const length = await chain.length();
  const inserted = (await pool.maybeOne(sql.unsafe`
    INSERT INTO chain_verifications (id, source, head) VALUES (${randomUUID()}, ${source}, ${length})
    ON CONFLICT ((true)) WHERE status = 'running' DO NOTHING
    RETURNING ${COLUMNS}`)) as VerificationRow | null;
  if (!inserted) {
    const running = (await pool.maybeOne(sql.unsafe`SELECT ${COLUMNS} FROM chain_verifications WHERE status = 'running'`)) as VerificationRow | null;
    // It ended between the insert and this read: start again.
    if (!running) return startChainVerification(pool, chain, source, options);
    return { verification: verificationOf(running), started: false };
  }
  const id = inserted.id;
  const heartbeat = setInterval(() => {
    void pool.query(sql.unsafe`UPDATE chain_verifications SET progressed_at = now() WHERE id = ${id} AND status = 'running'`).catch(() => {});
  }, HEARTBEAT_MS);
  let progress: Promise<unknown> = Promise.resolve();
  const done = chain.verify({
    ...options,
    onProgress: (checked, total) => {
      options.onProgress?.(checked, total);
      progress = progress.then(() =>
        pool
          .query(sql.unsafe`
            UPDATE chain_verifications SET checked = ${checked}, verified_to = ${checked}, head = ${total}, progressed_at = now()
            WHERE id = ${id} AND status = 'running'`)
          .catch(() => {}),
      );
    },
  })
    .then(async (verdict) => {
      await progress;
      await pool.query(sql.unsafe`
        UPDATE chain_verifications SET status = ${verdict.ok ? 'intact' : 'broken'}, finished_at = now(), progressed_at = now(),
          checked = ${verdict.checked}, verified_to = ${verdict.verifiedTo}, head = ${verdict.events ?? verdict.head.position},
          failure_position = ${verdict.failure?.position ?? null}, failure_problem = ${verdict.failure?.problem ?? null}
        WHERE id = ${id}`);
      return verdict;
    })
    .catch(async (error: unknown) => {
      await progress;
      const message = error instanceof Error ? error.message : String(error);
      await pool
        .query(sql.unsafe`
          UPDATE chain_verifications SET status = 'failed', finished_at = now(), progressed_at = now(), error = ${message.slice(0, 2000)}
          WHERE id = ${id}`)
        .catch(() => {});
      throw error;
    })
    .finally(() => clearInterval(heartbeat));
  return { verification: verificationOf(inserted), started: true, done };
}
