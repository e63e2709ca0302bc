import type { AddressInfo } from 'node:net';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import { waitFor } from './processes.ts';

export interface ReceivedMail {
  readonly from: string;
  readonly to: string[];
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** The mailer's `X-Portcullis-Job-Id` header. */
  readonly jobId: string | null;
  /** Order of acceptance, from 1. */
  readonly seq: number;
}

export type SmtpReply = { readonly code: number; readonly message: string };

/**
 * A real SMTP server in the test process (npm smtp-server, the third party's stand-in): it accepts mail,
 * parses it (postal-mime) and keeps it. `refuse` decides, per incoming message, whether to answer with an
 * error code instead of accepting it (451 for a temporary failure, 550 for a permanent one).
 */
export class TestSmtpServer {
  readonly mails: ReceivedMail[] = [];
  refuse: (mail: { to: string[] }) => SmtpReply | null = () => null;
  /** Every message offered, accepted or refused, with when it arrived (performance.now()). */
  readonly offers: { to: string[]; at: number; refused: number | null }[] = [];
  /** How long the server takes to accept a message, to make a burst last. */
  acceptDelayMs = 0;
  private seq = 0;

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<TestSmtpServer> {
    let instance: TestSmtpServer | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      size: 1024 * 1024,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
          const refusal = instance!.refuse({ to });
          instance!.offers.push({ to, at: performance.now(), refused: refusal?.code ?? null });
          if (refusal) {
            callback(Object.assign(new Error(refusal.message), { responseCode: refusal.code }));
            return;
          }
          void PostalMime.parse(Buffer.concat(chunks)).then(
            (parsed) => {
              const jobId = parsed.headers.find((h) => h.key === 'x-portcullis-job-id')?.value ?? null;
              // Accepted (kept) the moment the server answers 250.
              const accept = (): void => {
                instance!.mails.push({
                  from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                  to,
                  subject: parsed.subject ?? '',
                  text: parsed.text ?? '',
                  html: parsed.html ?? '',
                  jobId,
                  seq: ++instance!.seq,
                });
                callback();
              };
              if (instance!.acceptDelayMs > 0) setTimeout(accept, instance!.acceptDelayMs);
              else accept();
            },
            (error: unknown) => callback(error as Error),
          );
        });
      },
    });
    server.on('error', () => {});
    const port = await new Promise<number>((resolve) => {
      server.listen(0, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port));
    });
    instance = new TestSmtpServer(server, port);
    return instance;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  mailsTo(address: string): ReceivedMail[] {
    return this.mails.filter((m) => m.to.includes(address.toLowerCase()));
  }

  /** The `count`-th mail to `address` (1 = the first ever), once it has arrived. */
  async waitForMail(address: string, options: { count?: number; timeoutMs?: number; subject?: RegExp } = {}): Promise<ReceivedMail> {
    const count = options.count ?? 1;
    const matching = (): ReceivedMail[] => this.mailsTo(address).filter((m) => !options.subject || options.subject.test(m.subject));
    await waitFor(() => matching().length >= count, {
      timeoutMs: options.timeoutMs ?? 20_000,
      message: `mail #${count} to ${address}${options.subject ? ` with subject ${options.subject}` : ''}`,
    });
    return matching()[count - 1]!;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The link a mail carries (its text part holds it in full). */
export function linkIn(mail: { text: string }): string {
  const match = /https?:\/\/\S+/.exec(mail.text);
  if (!match) throw new Error(`no link in mail:\n${mail.text}`);
  return match[0];
}
