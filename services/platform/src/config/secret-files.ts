import { readFileSync } from 'node:fs';
import { socialProviderIds } from './social.ts';

/**
 * The settings that may come from a file instead: `<NAME>_FILE` holds the path of a file whose content is the
 * value, as Docker and Kubernetes mount secrets, so the secret never sits in the process' environment where
 * `docker inspect`, `/proc/<pid>/environ` and crash reports show it.
 */
export const secretFileVariables: readonly string[] = [
  'AUTH_SECRET',
  // The key ring (newest first), of which AUTH_SECRET is a ring of one.
  'AUTH_SECRETS',
  'AUTH_SERVER_API_KEY',
  'DATABASE_URL',
  // Its user and password, when the server has authentication on.
  'EVENTSTORE_URL',
  'REDIS_URL',
  'SMTP_URL',
  'KAFKA_SASL_PASSWORD',
  'AUDIT_SIGNING_KEY',
  'AUTH_CAPTCHA_SECRET_KEY',
  ...socialProviderIds.map((id) => `AUTH_${id.toUpperCase()}_CLIENT_SECRET`),
  'AUTH_APPLE_PRIVATE_KEY',
];

/** A generic OpenID Connect provider's secret, named at deployment (`AUTH_OIDC_<NAME>_CLIENT_SECRET`). */
const deploymentNamedSecret = /^AUTH_OIDC_[A-Z0-9_]+_CLIENT_SECRET$/;

/** The configuration table's patterns whose settings may come from a file. */
export const secretFilePatterns: readonly string[] = ['AUTH_<PROVIDER>_CLIENT_SECRET', 'AUTH_OIDC_<NAME>_CLIENT_SECRET'];

/** Whether the setting `name` (a variable, or a row's pattern in the configuration table) may come from `<name>_FILE`. */
export function takesSecretFile(name: string): boolean {
  return secretFileVariables.includes(name) || secretFilePatterns.includes(name) || deploymentNamedSecret.test(name);
}

const FILE_SUFFIX = '_FILE';

/** The file's content without its trailing line breaks, or what is wrong with it (by path, never content). */
function readSecret(variable: string, path: string): string | { problem: string } {
  let content: string;
  try {
    content = readFileSync(path, 'utf8').replace(/[\r\n]+$/, '');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: `${variable}: cannot read ${path}${code ? ` (${code})` : ''}` };
  }
  return content === '' ? { problem: `${variable}: ${path} is empty` } : content;
}

export interface ResolvedEnvironment {
  /** The environment with each `<NAME>_FILE` replaced by `<NAME>` holding the file's content. */
  readonly environment: Record<string, string>;
  /** What could not be resolved, each starting with the variable to change; never a value. */
  readonly problems: string[];
  /** The settings whose file could not be read: whatever parsing says of them follows from that. */
  readonly unresolved: ReadonlySet<string>;
}

/**
 * Reads every `<NAME>_FILE` of a setting that takes one into `<NAME>`, before the settings are parsed. The
 * file's trailing line break is not part of the value (`echo secret > file` writes one). Setting both names is
 * refused rather than one silently winning, and a file that cannot be read is named by its path: its content
 * never appears in a problem, since a half-readable or wrong file may still hold a secret.
 */
export function resolveSecretFiles(present: Readonly<Record<string, string>>): ResolvedEnvironment {
  const environment: Record<string, string> = { ...present };
  const problems: string[] = [];
  const unresolved = new Set<string>();
  for (const [variable, path] of Object.entries(present)) {
    const name = variable.endsWith(FILE_SUFFIX) ? variable.slice(0, -FILE_SUFFIX.length) : null;
    if (name === null || !takesSecretFile(name)) continue;
    delete environment[variable];
    if (present[name] !== undefined) {
      problems.push(`${variable}: and ${name} are both set; set one of them`);
      continue;
    }
    const content = readSecret(variable, path);
    if (typeof content === 'string') environment[name] = content;
    else {
      problems.push(content.problem);
      unresolved.add(name);
    }
  }
  return { environment, problems, unresolved };
}
