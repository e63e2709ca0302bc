import pg from 'pg';
import type { MailboxMessage } from '@portcullis/contracts';
import { sql, type DatabasePool } from '../database/pool.ts';
import type { MailTransport, OutgoingMail, SentMail } from './transport.ts';

/**
 * The embedded default's inbox: without SMTP_URL, mail lands in the `dev_mailbox` table, readable through
 * the api's ops endpoint (GET /ops/mailbox). One row per job id, so a re-delivery never shows twice.
 */
export class DevMailboxTransport implements MailTransport {
  readonly name = 'dev-mailbox';
  // A plain pg pool of its own: a delivery runs while the mailer holds the job's row in a transaction of
  // its (slonik) pool, and slonik refuses queries from that pool outside the transaction meanwhile.
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    this.pool.on('error', () => {});
  }

  async send(mail: OutgoingMail): Promise<SentMail> {
    await this.pool.query(
      `INSERT INTO dev_mailbox (job_id, sender, recipient, subject, text_body, html_body)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) DO NOTHING`,
      [mail.jobId, mail.from, mail.to.toLowerCase(), mail.subject, mail.text, mail.html],
    );
    return { messageId: null, response: 'stored in the dev mailbox' };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

export type { MailboxMessage };

/** The newest messages first, optionally for one recipient. */
export async function readDevMailbox(pool: DatabasePool, options: { to?: string; limit: number }): Promise<MailboxMessage[]> {
  const rows = (await pool.any(sql.unsafe`
    SELECT id, job_id, sender, recipient, subject, text_body, html_body, received_at FROM dev_mailbox
    WHERE ${options.to === undefined ? sql.fragment`true` : sql.fragment`recipient = ${options.to.toLowerCase()}`}
    ORDER BY id DESC LIMIT ${options.limit}`)) as readonly {
    id: bigint | number;
    job_id: string;
    sender: string;
    recipient: string;
    subject: string;
    text_body: string;
    html_body: string;
    received_at: number;
  }[];
  return rows.map((r) => ({
    id: Number(r.id),
    jobId: r.job_id,
    from: r.sender,
    to: r.recipient,
    subject: r.subject,
    text: r.text_body,
    html: r.html_body,
    receivedAt: new Date(r.received_at).toISOString(),
  }));
}
