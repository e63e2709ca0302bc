import nodemailer, { type Transporter } from 'nodemailer';
import { PermanentMailError, type MailTransport, type OutgoingMail, type SentMail } from './transport.ts';

/**
 * SMTP with nodemailer, pooled. Timeouts are short and bounded, so one stuck server costs a retry, not a
 * worker: a delivery holds its job's row lock while it talks to the server.
 */
export class SmtpTransport implements MailTransport {
  readonly name = 'smtp';
  private readonly transporter: Transporter;

  constructor(url: string, options: { maxConnections: number }) {
    this.transporter = nodemailer.createTransport({
      url,
      pool: true,
      maxConnections: options.maxConnections,
      connectionTimeout: 5_000,
      greetingTimeout: 5_000,
      socketTimeout: 15_000,
    } as Parameters<typeof nodemailer.createTransport>[0]) as Transporter;
  }

  async send(mail: OutgoingMail): Promise<SentMail> {
    try {
      const info = (await this.transporter.sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        headers: { 'X-Portcullis-Job-Id': mail.jobId, ...mail.headers },
      })) as { messageId?: string; response?: string };
      return { messageId: info.messageId ?? null, response: info.response ?? '' };
    } catch (error) {
      // A 5xx reply (bad recipient, refused sender) will not change on a retry; 4xx and network errors may.
      const code = (error as { responseCode?: unknown }).responseCode;
      if (typeof code === 'number' && code >= 500 && code < 600) {
        throw new PermanentMailError(`SMTP refused the mail (${code}): ${(error as Error).message}`, { cause: error });
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    this.transporter.close();
  }
}
