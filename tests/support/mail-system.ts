import { consumerGroupMembers } from './kafka.ts';
import { spawnService, waitFor, type ServiceProcess } from './processes.ts';
import { TestSmtpServer } from './smtp.ts';
import { startSystem, type StartSystemOptions, type System } from './system.ts';
import { serviceEntries } from '../../scripts/build.ts';

export interface MailSystem extends System {
  readonly mailer: ServiceProcess;
  /** The SMTP server the mailer delivers to, or null when it runs without SMTP_URL (dev mailbox). */
  readonly smtp: TestSmtpServer | null;
  /** Resolves once the mailer has taken in every job in the log so far and has none pending. */
  mailerIdle(): Promise<void>;
}

/**
 * startSystem plus the mailer as a third real process, delivering over SMTP to a real SMTP server in the
 * test (or, with `smtp: false`, into the dev mailbox). Retries are fast so a failed attempt costs little.
 */
export async function startMailSystem(options: StartSystemOptions & { smtp?: boolean } = {}): Promise<MailSystem> {
  const smtp = options.smtp === false ? null : await TestSmtpServer.start();
  let system: System;
  try {
    system = await startSystem({
      ...options,
      env: {
        SMTP_URL: smtp?.url ?? '',
        MAILER_POLL_INTERVAL_MS: '200',
        MAILER_RETRY_BASE_MS: '200',
        MAILER_RETRY_MAX_MS: '1000',
        ...options.env,
      },
    });
  } catch (error) {
    await smtp?.close();
    throw error;
  }
  const mailer = spawnService({ name: 'mailer', entry: serviceEntries.mailer.built, env: { ...system.env } });
  try {
    // Ready once it follows the log: its consumer group's checkpoint exists.
    const died = mailer.exited.then((exit) => {
      throw new Error(`mailer exited (${exit.code ?? exit.signal}) while starting:\n${mailer.output()}`);
    });
    died.catch(() => {});
    // Over Kafka (KAFKA_BROKERS in the environment), once the broker counts it in its consumer group.
    const kafkaGroup = system.env.KAFKA_BROKERS ? (system.env.KAFKA_MAILER_GROUP ?? 'portcullis-mailer') : null;
    await Promise.race([
      died,
      kafkaGroup
        ? waitFor(async () => (await consumerGroupMembers(kafkaGroup)) > 0, { timeoutMs: 60_000, message: `the mailer to join the consumer group ${kafkaGroup}` })
        : waitFor(async () => (await system.query(`SELECT 1 FROM projection_checkpoints WHERE name LIKE 'mail-bus:%'`)).length > 0, {
            timeoutMs: 60_000,
            message: 'the mailer to follow the log',
          }),
    ]);
  } catch (error) {
    await mailer.stop();
    await system.stop();
    await smtp?.close();
    throw error;
  }
  return {
    ...system,
    mailer,
    smtp,
    mailerIdle: () =>
      waitFor(
        async () => {
          const [row] = await system.query<{ behind: boolean }>(`
            SELECT (SELECT position FROM event_log_head) >
                     coalesce((SELECT min(position) FROM projection_checkpoints WHERE name LIKE 'mail-bus:%'), 0)
                OR EXISTS (SELECT 1 FROM mail_delivery WHERE status = 'pending') AS behind`);
          return row?.behind === false;
        },
        { timeoutMs: 20_000, message: 'the mailer to be idle' },
      ),
    stop: async () => {
      await mailer.stop();
      await system.stop();
      await smtp?.close();
    },
  };
}
