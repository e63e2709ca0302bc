import { relative } from 'node:path';
import { ConfigError, loadConfig, type Config } from '@portcullis/platform/config/index';
import { isAcceptedVariable } from '@portcullis/platform/config/variables';
import { composeSecretPaths, imageEnvironment, placeholderFor, secretOfFileVariable, type ComposeFile } from './deployment-files.ts';
import type { KubernetesObject } from './kustomize.ts';

export interface ResolvedEnvironment {
  /** What is wrong: unknown variables, secret files nobody mounts, what the configuration refuses. */
  readonly problems: string[];
  /** The configuration the process would run with (placeholders for its secrets), when it loads. */
  readonly config: Config | null;
}

/**
 * A process' environment as a deployment sets it, checked as the process would read it: on top of the
 * image's, each `*_FILE` variable replaced by its secret (a placeholder) when the file is one the deployment
 * mounts (`mountedSecret` says so), then loadConfig in production mode.
 */
export function resolveEnvironment(environment: Readonly<Record<string, string>>, mountedSecret: (path: string) => string | null): ResolvedEnvironment {
  const problems: string[] = [];
  const resolved: Record<string, string> = { ...imageEnvironment };
  for (const [name, value] of Object.entries(environment)) {
    if (!isAcceptedVariable(name)) problems.push(`${name}: no setting reads it`);
    const secret = secretOfFileVariable(name);
    if (secret === null) {
      resolved[name] = value;
      continue;
    }
    const problem = mountedSecret(value);
    if (problem !== null) problems.push(`${name}: ${problem}`);
    else resolved[secret] = placeholderFor(secret);
  }
  // The rule for production, checked here whether or not loadConfig holds it yet.
  if (resolved.SMTP_URL === undefined) problems.push('SMTP_URL: production mails through a relay (set it or SMTP_URL_FILE)');
  try {
    return { problems, config: loadConfig(resolved) };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { problems: [...problems, ...error.problems], config: null };
  }
}

/** A compose service's environment against the secrets compose mounts into it. */
export function resolveComposeService(compose: ComposeFile, serviceName: string, environment: Readonly<Record<string, string>>): ResolvedEnvironment {
  const service = compose.services[serviceName];
  if (!service) throw new Error(`docker-compose.yml has no service ${serviceName}`);
  const mounted = composeSecretPaths(service);
  return resolveEnvironment(environment, (path) => {
    const secret = mounted.get(path);
    if (secret === undefined) return `${path} is none of the service's secrets`;
    if (!compose.secrets?.[secret]) return `the secret ${secret} is not declared`;
    return null;
  });
}

interface Container {
  name: string;
  image?: string;
  args?: string[];
  command?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } } }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  [field: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Array<{ name: string; secret?: { secretName: string; items?: Array<{ key: string; path: string }> } }>;
  [field: string]: unknown;
}

export interface Workload {
  readonly object: KubernetesObject;
  readonly pod: PodSpec;
}

/** The Deployments and Jobs, with their pod specs. */
export function workloadsOf(objects: readonly KubernetesObject[]): Workload[] {
  return objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
    .map((object) => ({ object, pod: (object.spec as { template: { spec: PodSpec } }).template.spec }));
}

function find(objects: readonly KubernetesObject[], kind: string, name: string, namespace: string | undefined): KubernetesObject | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace);
}

function secretKeys(secret: KubernetesObject): string[] {
  return [...Object.keys((secret.data as Record<string, string> | undefined) ?? {}), ...Object.keys((secret.stringData as Record<string, string> | undefined) ?? {})];
}

/**
 * A container's environment as Kubernetes hands it over (envFrom, then env), checked against the
 * ConfigMaps and Secrets rendered beside it and the secret volumes it mounts.
 */
export function resolveContainer(objects: readonly KubernetesObject[], workload: Workload, container: Container): ResolvedEnvironment {
  const namespace = workload.object.metadata.namespace;
  const problems: string[] = [];
  const environment: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (!source.configMapRef) {
      problems.push(`${container.name}: envFrom other than a ConfigMap hides which variables it sets`);
      continue;
    }
    const configMap = find(objects, 'ConfigMap', source.configMapRef.name, namespace);
    if (!configMap) problems.push(`${container.name}: no ConfigMap ${source.configMapRef.name}`);
    Object.assign(environment, (configMap?.data as Record<string, string> | undefined) ?? {});
  }
  for (const variable of container.env ?? []) {
    const secretRef = variable.valueFrom?.secretKeyRef;
    const configMapRef = variable.valueFrom?.configMapKeyRef;
    if (secretRef) {
      const secret = find(objects, 'Secret', secretRef.name, namespace);
      if (!secret || !secretKeys(secret).includes(secretRef.key)) problems.push(`${variable.name}: no key ${secretRef.key} in a Secret ${secretRef.name}`);
      environment[variable.name] = placeholderFor(variable.name);
    } else if (configMapRef) {
      const value = (find(objects, 'ConfigMap', configMapRef.name, namespace)?.data as Record<string, string> | undefined)?.[configMapRef.key];
      if (value === undefined) problems.push(`${variable.name}: no key ${configMapRef.key} in a ConfigMap ${configMapRef.name}`);
      else environment[variable.name] = value;
    } else {
      environment[variable.name] = variable.value ?? '';
    }
  }
  const resolved = resolveEnvironment(environment, (path) => {
    for (const mount of container.volumeMounts ?? []) {
      const file = relative(mount.mountPath, path);
      if (file.startsWith('..') || file === '') continue;
      const volume = workload.pod.volumes?.find((v) => v.name === mount.name);
      if (!volume?.secret) return `${path} is under ${mount.mountPath}, which is no secret volume`;
      const key = volume.secret.items ? volume.secret.items.find((item) => item.path === file)?.key : file;
      const secret = find(objects, 'Secret', volume.secret.secretName, namespace);
      if (key === undefined || !secret || !secretKeys(secret).includes(key)) return `${path}: no key ${file} in the Secret ${volume.secret.secretName}`;
      return null;
    }
    return `${path} is in no volume the container mounts`;
  });
  return { problems: [...problems, ...resolved.problems], config: resolved.config };
}

export function containersOf(workload: Workload): Container[] {
  return [...(workload.pod.initContainers ?? []), ...workload.pod.containers];
}
