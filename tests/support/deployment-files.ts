import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { takesSecretFile } from '@portcullis/platform/config/secret-files';
import { portcullisCommands } from '../../scripts/service-entries.ts';
import { imageRuntime } from './dockerfile.ts';

export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The compose file and the override files that go with its profiles. */
export const composeFiles = ['docker-compose.yml', 'docker-compose.kafka.yml', 'docker-compose.observability.yml'] as const;
export const composeOverrides = composeFiles.filter((file) => file !== 'docker-compose.yml');

/** The image's dispatcher: a container's command is one of these, then its arguments. */
export const dispatcherCommands = Object.keys(portcullisCommands);

/** The processes that run for good, each as the command of the same name. */
export const longRunningServices = ['api', 'projector', 'mailer'] as const;
export type LongRunningService = (typeof longRunningServices)[number];

/** What the image sets for every command (ENV in the Dockerfile). */
export const imageEnvironment: Readonly<Record<string, string>> = imageRuntime().environment;

/** Parses YAML as compose does: anchors, and `<<` merge keys. */
export function parseYaml(text: string): unknown {
  return parse(text, { merge: true });
}

export function readRepositoryFile(path: string): string {
  return readFileSync(`${repositoryRoot}${path}`, 'utf8');
}

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  secrets?: Array<string | { source: string; target?: string }>;
  healthcheck?: { test?: string | string[] };
  networks?: string[] | Record<string, { ipv4_address?: string } | null>;
  profiles?: string[];
  volumes?: string[];
  [field: string]: unknown;
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  secrets?: Record<string, { file?: string; environment?: string }>;
  networks?: Record<string, { ipam?: { config?: Array<{ subnet?: string; ip_range?: string }> } } | null>;
  [field: string]: unknown;
}

export function readCompose(file: string): ComposeFile {
  return parseYaml(readRepositoryFile(file)) as ComposeFile;
}

/** A service's environment as a map, whichever of compose's two forms it is written in. */
export function environmentOf(service: ComposeService | undefined): Record<string, string> {
  const environment = service?.environment;
  if (environment === undefined) return {};
  if (Array.isArray(environment)) {
    return Object.fromEntries(environment.map((entry) => [entry.split('=')[0]!, entry.slice(entry.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, value === null ? '' : String(value)]));
}

/** A service's environment once an override file is applied: compose merges environments by name. */
export function composedEnvironment(serviceName: string, overrides: readonly string[]): Record<string, string> {
  let environment = environmentOf(readCompose('docker-compose.yml').services[serviceName]);
  for (const override of overrides) environment = { ...environment, ...environmentOf(readCompose(override).services[serviceName]) };
  return environment;
}

export function commandOf(service: ComposeService): string[] {
  const command = service.command;
  if (command === undefined) return [];
  return Array.isArray(command) ? command : command.split(/\s+/).filter((part) => part !== '');
}

/** Compose mounts a service's secret `name` at /run/secrets/<target or name>. */
export function composeSecretPaths(service: ComposeService): Map<string, string> {
  const paths = new Map<string, string>();
  for (const secret of service.secrets ?? []) {
    if (typeof secret === 'string') paths.set(`/run/secrets/${secret}`, secret);
    else paths.set(secret.target?.startsWith('/') ? secret.target : `/run/secrets/${secret.target ?? secret.source}`, secret.source);
  }
  return paths;
}

/**
 * A value each secret setting accepts, standing in for what a deployment mounts: the checks run the
 * configuration over the files' names, not over real secrets (there are none in the repository).
 */
const placeholders: Readonly<Record<string, () => string>> = {
  AUTH_SECRET: () => randomBytes(48).toString('base64url'),
  AUTH_SECRETS: () => `${randomBytes(48).toString('base64url')},${randomBytes(48).toString('base64url')}`,
  AUTH_SERVER_API_KEY: () => randomBytes(32).toString('base64url'),
  DATABASE_URL: () => 'postgres://portcullis:placeholder@postgres.invalid:5432/portcullis',
  REDIS_URL: () => 'redis://:placeholder@redis.invalid:6379',
  SMTP_URL: () => 'smtps://placeholder:placeholder@smtp.invalid:465',
  AUDIT_SIGNING_KEY: () => randomBytes(32).toString('base64'),
  AUTH_CAPTCHA_SECRET_KEY: () => 'placeholder-captcha-secret',
};

export function placeholderFor(variable: string): string {
  const make = placeholders[variable] ?? (variable.endsWith('_CLIENT_SECRET') ? () => 'placeholder-client-secret' : undefined);
  if (!make) throw new Error(`no placeholder for the secret ${variable}: add one to tests/support/deployment-files.ts`);
  return make();
}

/** `AUTH_SECRET_FILE` → `AUTH_SECRET`, for the variables that have a file twin; null for any other. */
export function secretOfFileVariable(name: string): string | null {
  if (!name.endsWith('_FILE')) return null;
  const base = name.slice(0, -'_FILE'.length);
  return takesSecretFile(base) ? base : null;
}

export interface ExportedInstrument {
  readonly kind: 'Counter' | 'UpDownCounter' | 'Histogram' | 'Gauge' | 'ObservableGauge' | 'ObservableCounter' | 'ObservableUpDownCounter';
  readonly name: string;
  readonly unit: string | undefined;
  readonly file: string;
}

/**
 * Every instrument the services make (`meter.createCounter('portcullis.sign_ins', …)`, or a name held in an
 * exported constant), read from their source. A name that cannot be resolved fails, rather than being missed.
 */
export function instrumentsInSource(files: ReadonlyMap<string, string>): ExportedInstrument[] {
  const constants = new Map<string, string>();
  for (const text of files.values()) {
    for (const match of text.matchAll(/export const ([A-Z][A-Z0-9_]*) = '([^']+)'/g)) constants.set(match[1]!, match[2]!);
  }
  const found: ExportedInstrument[] = [];
  const call = /\.create(Counter|UpDownCounter|Histogram|Gauge|ObservableGauge|ObservableCounter|ObservableUpDownCounter)\(\s*(?:'([^']+)'|([A-Za-z_][A-Za-z0-9_]*))\s*(?:,\s*\{([^}]*)\})?/g;
  for (const [file, text] of files) {
    for (const match of text.matchAll(call)) {
      const name = match[2] ?? constants.get(match[3]!);
      if (name === undefined) throw new Error(`${file}: the instrument name ${match[3]} is no exported string constant`);
      const unit = /unit:\s*'([^']*)'/.exec(match[4] ?? '')?.[1];
      found.push({ kind: match[1] as ExportedInstrument['kind'], name, unit, file });
    }
  }
  return found;
}
