import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from './config/index.ts';
import { chooseLogFormat, createLogger, type LogFormatSetting } from './logger.ts';

/** Everything a logger wrote, as text. */
function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

const SECRET = 'do-not-print-this-value';

function logSecrets(format: LogFormatSetting): string {
  const out = sink();
  const log = createLogger({ name: 'spec', level: 'info', format, destination: out.stream });
  log.info({ req: { headers: { authorization: `Bearer ${SECRET}`, cookie: `s=${SECRET}` } }, body: { password: SECRET } }, 'signed in');
  log.info({ token: SECRET, user: { secret: SECRET, newPassword: SECRET } }, 'changed');
  return out.text();
}

describe('log format', () => {
  it('is pretty on a terminal and JSON otherwise, unless LOG_FORMAT says which', () => {
    expect(chooseLogFormat('auto', true)).toBe('pretty');
    expect(chooseLogFormat('auto', false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
  });

  it('is read from LOG_FORMAT, auto by default, and a bad value is refused naming the variable', () => {
    const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/db', AUTH_SECRET: 'x'.repeat(32) };
    expect(loadConfig(base).logFormat).toBe('auto');
    expect(loadConfig({ ...base, LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(loadConfig({ ...base, LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ ...base, LOG_FORMAT: 'yaml' })).toThrow(ConfigError);
    try {
      loadConfig({ ...base, LOG_FORMAT: 'yaml' });
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([expect.stringMatching(/^LOG_FORMAT: /)]);
    }
  });

  it('writes JSON lines with secrets redacted', () => {
    const text = logSecrets('json');
    const lines = text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.msg)).toEqual(['signed in', 'changed']);
    expect(lines[0]).toMatchObject({ name: 'spec', req: { headers: { authorization: '[redacted]', cookie: '[redacted]' } }, body: { password: '[redacted]' } });
    expect(lines[1]).toMatchObject({ token: '[redacted]', user: { secret: '[redacted]', newPassword: '[redacted]' } });
    expect(text).not.toContain(SECRET);
  });

  it('writes readable lines, not JSON, with the same secrets redacted', () => {
    const text = logSecrets('pretty');
    expect(text).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO \(spec\): signed in$/m);
    expect(text).toMatch(/INFO \(spec\): changed$/m);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(SECRET);
    expect(() => JSON.parse(text.split('\n')[0]!)).toThrow();
  });
});
