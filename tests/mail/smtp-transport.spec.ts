import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeferredMailError, PermanentMailError, SmtpTransport, type MailTransport } from '@portcullis/platform';
import { TestSmtpServer } from '../support/smtp.ts';

type Verdict = 'sent' | 'refused for good' | 'deferred' | 'relay unusable';

/**
 * How the SMTP transport judges what a real SMTP server answers: a refusal of the mail itself is permanent
 * (5xx) or deferred (4xx); anything that keeps the mail from being offered at all (a server that is down,
 * a session refused with 421 or a 5xx greeting, a login refused) or that closes the session (421) says the
 * relay cannot be used now, whatever the code: the mailer retries those and releases them when the relay
 * is back.
 */
describe('the SMTP transport: the mail refused, or the relay unusable', () => {
  let smtp: TestSmtpServer;
  const transports: MailTransport[] = [];

  beforeAll(async () => {
    smtp = await TestSmtpServer.start();
  });

  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    smtp.refuse = () => null;
    smtp.refuseSessions = null;
    smtp.refuseLogins = false;
    await smtp.restart();
  });

  afterAll(async () => {
    await smtp?.close();
  });

  async function verdict(url = smtp.url): Promise<Verdict> {
    const transport = new SmtpTransport(url, { maxConnections: 1 });
    transports.push(transport);
    try {
      await transport.send({ jobId: crypto.randomUUID(), from: 'no-reply@example.test', to: 'someone@example.test', subject: 'Hello', text: 'Hello', html: '<p>Hello</p>' });
      return 'sent';
    } catch (error) {
      if (error instanceof PermanentMailError) return 'refused for good';
      if (error instanceof DeferredMailError) return 'deferred';
      return 'relay unusable';
    }
  }

  it('sends, and judges a refusal of the mail by its class', async () => {
    expect(await verdict()).toBe('sent');
    smtp.refuse = () => ({ code: 550, message: 'No such mailbox' });
    expect(await verdict()).toBe('refused for good');
    smtp.refuse = () => ({ code: 452, message: 'Too much mail for this mailbox, try later' });
    expect(await verdict()).toBe('deferred');
    // A 421 closes the session: the relay is going away, not judging this mail.
    smtp.refuse = () => ({ code: 421, message: 'Service shutting down' });
    expect(await verdict()).toBe('relay unusable');
  });

  it('takes a relay that is down, refuses sessions or refuses the login as unusable, never as a refusal of the mail', async () => {
    smtp.refuseSessions = { code: 421, message: 'Too busy, try again later' };
    expect(await verdict()).toBe('relay unusable');
    smtp.refuseSessions = { code: 554, message: 'No SMTP service here' };
    expect(await verdict()).toBe('relay unusable');
    smtp.refuseSessions = null;
    smtp.refuseLogins = true;
    expect(await verdict(`smtp://mailer:wrong-password@127.0.0.1:${smtp.port}`)).toBe('relay unusable');
    smtp.refuseLogins = false;
    await smtp.stop();
    expect(await verdict()).toBe('relay unusable');
    await smtp.restart();
    expect(await verdict()).toBe('sent');
  });
});
