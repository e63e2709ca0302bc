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
 * (`dev-mailbox.ts`). `send` resolves only once the mail was accepted. It throws `PermanentMailError` for a
 * refusal of this mail that no retry will fix, `DeferredMailError` when the relay works but will not take
 * this mail yet; anything else means the relay could not be used at all (down, unreachable, refusing every
 * session), and is retried too.
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

/**
 * The relay answered about this mail with a temporary refusal (4xx to its sender, recipient or content: a
 * rate limit, a full mailbox, greylisting). The relay itself works, so another mail going through says
 * nothing about when this one will: it waits out its own backoff.
 */
export class DeferredMailError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DeferredMailError';
  }
}
