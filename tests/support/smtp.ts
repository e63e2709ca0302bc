import type { AddressInfo } from 'node:net';
import PostalMime from 'postal-mime';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
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
  /** The sender's TCP port: which connection, and so which process, delivered it. */
  readonly remotePort: number;
}

export type SmtpReply = { readonly code: number; readonly message: string };

/**
 * A real SMTP server in the test process (npm smtp-server, the third party's stand-in): it accepts mail,
 * parses it (postal-mime) and keeps it. `refuse` decides, per incoming message, whether to answer with an
 * error code instead of accepting it (451 for a temporary failure, 550 for a permanent one). `stop` takes it
 * off the network (an outage: connections are refused) and `restart` brings it back on the same port.
 */
export class TestSmtpServer {
  readonly mails: ReceivedMail[] = [];
  refuse: (mail: { to: string[] }) => SmtpReply | null = () => null;
  /** A reply refusing every session as it opens (a 421 of a busy relay, a 554 greeting), or null to serve. */
  refuseSessions: SmtpReply | null = null;
  /** Answer every login with 535 (a client that logs in; one that does not is served without). */
  refuseLogins = false;
  /** Every message offered, accepted or refused, with when it arrived (performance.now()). */
  readonly offers: { to: string[]; at: number; refused: number | null }[] = [];
  /** How long the server takes to accept a message, to make a burst last. */
  acceptDelayMs = 0;
  /**
   * The messages being received or received and not yet answered, with the sender's TCP port and the job id
   * (once its header has arrived): a sender killed now never hears the 250.
   */
  readonly receiving = new Set<{ readonly remotePort: number; jobId: string | null }>();
  private seq = 0;
  private server: SMTPServer | null = null;
  private listeningPort = 0;

  private constructor() {}

  static async start(): Promise<TestSmtpServer> {
    const instance = new TestSmtpServer();
    await instance.restart();
    return instance;
  }

  get port(): number {
    return this.listeningPort;
  }

  /** The relay goes down: it stops listening, and the connections a client keeps open are closed (421). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The relay is back, on the port it had (a free one at the first start). */
  async restart(): Promise<void> {
    if (this.server) return;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      logger: false,
      size: 1024 * 1024,
      // A stopped server drops the connections a pooling client holds at once, as a relay going down would.
      closeTimeout: 50,
      onConnect: (_session, callback) => callback(this.refuseSessions ? smtpError(this.refuseSessions) : null),
      onAuth: (auth, _session, callback) =>
        this.refuseLogins ? callback(smtpError({ code: 535, message: 'Authentication credentials invalid' })) : callback(null, { user: auth.username }),
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        const arrival = { remotePort: session.remotePort, jobId: null as string | null };
        this.receiving.add(arrival);
        stream.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          arrival.jobId ??= JOB_ID_HEADER.exec(Buffer.concat(chunks).toString('utf8'))?.[1] ?? null;
        });
        stream.on('end', () =>
          this.receive(session, Buffer.concat(chunks), (error) => {
            this.receiving.delete(arrival);
            callback(error);
          }),
        );
      },
    });
    server.on('error', () => {});
    this.listeningPort = await listen(server, this.listeningPort);
    this.server = server;
  }

  /** Accepts (or refuses) one message as it arrives. */
  private receive(session: SMTPServerSession, message: Buffer, callback: (error?: Error | null) => void): void {
    const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
    const refusal = this.refuse({ to });
    this.offers.push({ to, at: performance.now(), refused: refusal?.code ?? null });
    if (refusal) {
      callback(smtpError(refusal));
      return;
    }
    void PostalMime.parse(message).then(
      (parsed) => {
        const jobId = parsed.headers.find((h) => h.key === 'x-portcullis-job-id')?.value ?? null;
        // Accepted (kept) the moment the server answers 250.
        const accept = (): void => {
          this.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to,
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: parsed.html ?? '',
            jobId,
            seq: ++this.seq,
            remotePort: session.remotePort,
          });
          callback();
        };
        if (this.acceptDelayMs > 0) setTimeout(accept, this.acceptDelayMs);
        else accept();
      },
      (error: unknown) => callback(error as Error),
    );
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
    return this.stop();
  }
}

/** The mailer's job id header, as soon as the message's headers have arrived. */
const JOB_ID_HEADER = /^x-portcullis-job-id:\s*(\S+)/im;

function smtpError(reply: SmtpReply): Error {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

function listen(server: SMTPServer, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.server.off('error', reject);
      resolve((server.server.address() as AddressInfo).port);
    });
  });
}

/** The link a mail carries (its text part holds it in full). */
export function linkIn(mail: { text: string }): string {
  const match = /https?:\/\/\S+/.exec(mail.text);
  if (!match) throw new Error(`no link in mail:\n${mail.text}`);
  return match[0];
}
