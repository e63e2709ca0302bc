import { spawnService, type ServiceProcess } from './processes.ts';
import { TestSmtpServer } from './smtp.ts';
import { startSystem, type StartSystemOptions, type System } from './system.ts';

export interface MailSystem extends System {
  readonly mailer: ServiceProcess;
  /** The SMTP server the mailer delivers to, or null when it runs without SMTP_URL (dev mailbox). */
  readonly smtp: TestSmtpServer | null;
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
  const mailer = spawnService({ name: 'mailer', entry: 'services/mailer/src/main.ts', env: { ...system.env } });
  return {
    ...system,
    mailer,
    smtp,
    stop: async () => {
      await mailer.stop();
      await system.stop();
      await smtp?.close();
    },
  };
}
