import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_PASSWORD, uniqueEmail } from '../support/auth.ts';
import { describeWithKafka, isolatedKafkaEnv } from '../support/kafka.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient } from '../support/system.ts';

/**
 * The system with KAFKA_BROKERS: the api records the mail job in the log, the projector's relay publishes it to
 * its topic on the run's broker (topics it creates itself: the broker creates none on first use), the mailer takes
 * it from there as a consumer group, and the mail arrives over SMTP with a link that works.
 */
describeWithKafka('mail over Kafka, end to end', () => {
  let system: MailSystem;

  beforeAll(async () => {
    system = await startMailSystem({ env: { ...isolatedKafkaEnv('system'), AUTH_REQUIRE_EMAIL_VERIFICATION: 'true' } });
  });

  afterAll(async () => {
    await system?.stop();
  });

  it('mails the verification link of a sign-up and the reset link of a forgotten password', async () => {
    const email = uniqueEmail('kafka');
    const browser = new HttpClient(system.authUrl);
    const signedUp = await browser.post('sign-up/email', { name: 'Kafka', email, password: DEFAULT_PASSWORD });
    expect(signedUp.status, signedUp.text).toBe(200);

    const verification = await system.smtp!.waitForMail(email, { subject: /Verify your email/, timeoutMs: 60_000 });
    const verified = await browser.get(linkIn(verification));
    expect(verified.status).toBe(302);

    expect((await browser.post('request-password-reset', { email })).status).toBe(200);
    const reset = await system.smtp!.waitForMail(email, { subject: /Reset your/, timeoutMs: 60_000 });
    expect(linkIn(reset)).toContain('/reset-password/');
    // Kafka carried them: the relay published past both jobs, and the mailer never followed the log for mail jobs.
    const checkpoints = await system.query<{ name: string; position: string }>(
      `SELECT name, position FROM projection_checkpoints WHERE name = 'mail-relay' OR name LIKE 'mail-bus:%'`,
    );
    expect(checkpoints.map((c) => c.name)).toEqual(['mail-relay']);
    expect(Number(checkpoints[0]!.position)).toBeGreaterThan(0);
  });
});
