/** A rendered mail, ready for a transport. */
export interface OutgoingMail {
  readonly jobId: string;
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface SentMail {
  readonly messageId: string | null;
  /** What the receiving server said when it accepted the mail. */
  readonly response: string;
}

/**
 * Where rendered mail goes: SMTP (`smtp.ts`) when SMTP_URL is set, else the dev mailbox in Postgres
 * (`dev-mailbox.ts`). `send` resolves only once the mail was accepted; it throws `PermanentMailError` for a
 * refusal that no retry will fix, anything else is retried.
 */
export interface MailTransport {
  readonly name: string;
  send(mail: OutgoingMail): Promise<SentMail>;
  close(): Promise<void>;
}

export class PermanentMailError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentMailError';
  }
}
