import nodemailer, { type Transporter } from 'nodemailer';
import { DeferredMailError, PermanentMailError, type MailTransport, type OutgoingMail, type SentMail } from './transport.ts';

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
      throw classified(error);
    }
  }

  async close(): Promise<void> {
    this.transporter.close();
  }
}

/** The commands whose replies are about the mail itself rather than about the session with the relay. */
const commandsAboutTheMail = new Set(['MAIL FROM', 'RCPT TO', 'DATA']);

/**
 * A reply to the mail's own commands judges the mail: 5xx (but 503, a session out of step) refuses it for
 * good, 4xx defers it. 421 closes the session whatever the command, and errors before the mail (connecting,
 * TLS, the greeting, EHLO, AUTH) say the relay cannot be used now: those are left as they are, temporary.
 * Postfix judges alike: it defers mail on a 5xx greeting (smtp_skip_5xx_greeting) and on a refused login
 * (smtp_sasl_auth_soft_bounce), so a relay misconfigured for an hour dead-letters nothing.
 */
function classified(error: unknown): unknown {
  const { command, responseCode } = error as { command?: unknown; responseCode?: unknown };
  if (typeof command !== 'string' || !commandsAboutTheMail.has(command) || typeof responseCode !== 'number' || responseCode === 421) return error;
  const message = `SMTP ${responseCode >= 500 && responseCode !== 503 ? 'refused' : 'deferred'} the mail (${responseCode}): ${(error as Error).message}`;
  if (responseCode >= 500 && responseCode < 600 && responseCode !== 503) return new PermanentMailError(message, { cause: error });
  if (responseCode >= 400 && responseCode < 600) return new DeferredMailError(message, { cause: error });
  return error;
}
