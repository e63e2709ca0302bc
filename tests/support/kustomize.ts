import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';

/**
 * A Kubernetes object as rendered: what `kubectl kustomize` prints, one per document. Typed loosely on
 * purpose: the objects are checked against the Kubernetes schemas, not by this type.
 */
export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [field: string]: unknown };
  [field: string]: unknown;
}

/**
 * The kustomization fields this renderer implements: exactly those deploy/kubernetes uses. Any other field
 * fails the render, so a kustomization that grows one cannot be rendered (and checked) wrongly.
 */
const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'labels', 'images', 'patches']);

/** Kinds that live outside namespaces (the ones a kustomization here could hold). */
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PriorityClass', 'StorageClass']);

/** Where each workload kind keeps its pod template. */
const POD_TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  namespace?: string;
  labels?: Array<{ pairs: Record<string, string>; includeSelectors?: boolean; includeTemplates?: boolean }>;
  images?: Array<{ name: string; newName?: string; newTag?: string; digest?: string }>;
  patches?: Array<{ target?: { kind?: string; name?: string }; patch?: string; path?: string; options?: unknown }>;
}

type JsonPatchOperation = { op: string; path: string; value?: unknown };

class KustomizeError extends Error {
  constructor(directory: string, message: string) {
    super(`${join(directory, 'kustomization.yaml')}: ${message}`);
    this.name = 'KustomizeError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readKustomization(directory: string): Kustomization {
  const path = join(directory, 'kustomization.yaml');
  if (!existsSync(path)) throw new KustomizeError(directory, 'not found');
  const parsed: unknown = parse(readFileSync(path, 'utf8'));
  if (!isRecord(parsed)) throw new KustomizeError(directory, 'is not a mapping');
  const unsupported = Object.keys(parsed).filter((field) => !SUPPORTED_FIELDS.has(field));
  if (unsupported.length > 0) throw new KustomizeError(directory, `fields this renderer does not implement: ${unsupported.join(', ')}`);
  if (parsed.kind !== undefined && parsed.kind !== 'Kustomization') throw new KustomizeError(directory, `kind ${JSON.stringify(parsed.kind)} is not Kustomization`);
  return parsed;
}

function readResourceFile(directory: string, file: string): KubernetesObject[] {
  const documents = parseAllDocuments(readFileSync(join(directory, file), 'utf8'));
  const objects: KubernetesObject[] = [];
  for (const document of documents) {
    if (document.errors.length > 0) throw new KustomizeError(directory, `${file}: ${document.errors[0]!.message}`);
    const object: unknown = document.toJS();
    if (object === null) continue;
    if (!isRecord(object) || typeof object.kind !== 'string' || typeof object.apiVersion !== 'string' || !isRecord(object.metadata)) {
      throw new KustomizeError(directory, `${file}: a document without apiVersion, kind and metadata`);
    }
    objects.push(object as KubernetesObject);
  }
  return objects;
}

function addLabels(target: Record<string, unknown>, pairs: Record<string, string>): void {
  const metadata = isRecord(target.metadata) ? target.metadata : (target.metadata = {});
  metadata.labels = { ...(isRecord(metadata.labels) ? metadata.labels : {}), ...pairs };
}

function applyLabels(objects: KubernetesObject[], labels: NonNullable<Kustomization['labels']>, directory: string): void {
  for (const { pairs, includeSelectors, includeTemplates } of labels) {
    if (includeSelectors) throw new KustomizeError(directory, 'labels with includeSelectors are not implemented');
    for (const object of objects) {
      addLabels(object, pairs);
      const templatePath = POD_TEMPLATE_PATHS[object.kind];
      if (!includeTemplates || !templatePath) continue;
      let template: unknown = object;
      for (const key of templatePath) template = isRecord(template) ? template[key] : undefined;
      if (isRecord(template)) addLabels(template, pairs);
    }
  }
}

/** `registry/name:tag` or `name@sha256:…` → the name images match on. */
function imageName(image: string): string {
  const withoutDigest = image.split('@')[0]!;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  return colon > lastSlash ? withoutDigest.slice(0, colon) : withoutDigest;
}

function applyImages(objects: KubernetesObject[], images: NonNullable<Kustomization['images']>): void {
  for (const object of objects) {
    const templatePath = POD_TEMPLATE_PATHS[object.kind];
    if (!templatePath) continue;
    let template: unknown = object;
    for (const key of templatePath) template = isRecord(template) ? template[key] : undefined;
    const spec = isRecord(template) && isRecord(template.spec) ? template.spec : null;
    if (!spec) continue;
    for (const list of [spec.initContainers, spec.containers]) {
      for (const container of Array.isArray(list) ? list : []) {
        if (!isRecord(container) || typeof container.image !== 'string') continue;
        const rule = images.find((image) => image.name === imageName(container.image as string));
        if (!rule) continue;
        const current = container.image;
        const currentTag = current.includes('@') ? `@${current.split('@')[1]!}` : current.length > imageName(current).length ? current.slice(imageName(current).length) : '';
        const suffix = rule.digest ? `@${rule.digest}` : rule.newTag ? `:${rule.newTag}` : currentTag;
        container.image = `${rule.newName ?? rule.name}${suffix}`;
      }
    }
  }
}

/** RFC 6901: `/data/BASE_URL` → ['data', 'BASE_URL']. */
function pointerTokens(pointer: string): string[] {
  if (!pointer.startsWith('/')) throw new Error(`JSON pointer '${pointer}' does not start with /`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** RFC 6902's add, replace and remove; the other operations fail the render. */
function applyJsonPatch(object: KubernetesObject, operations: JsonPatchOperation[], directory: string): void {
  for (const { op, path, value } of operations) {
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw new KustomizeError(directory, `patch operation '${op}' is not implemented`);
    const tokens = pointerTokens(path);
    const last = tokens.pop()!;
    let parent: unknown = object;
    for (const token of tokens) {
      parent = Array.isArray(parent) ? parent[Number(token)] : isRecord(parent) ? parent[token] : undefined;
      if (parent === undefined) throw new KustomizeError(directory, `patch path ${path} does not exist in ${object.kind}/${object.metadata.name}`);
    }
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new KustomizeError(directory, `patch path ${path}: no index ${last}`);
      if (op === 'add') parent.splice(index, 0, value);
      else if (op === 'replace') parent[index] = value;
      else parent.splice(index, 1);
    } else if (isRecord(parent)) {
      if (op !== 'add' && !(last in parent)) throw new KustomizeError(directory, `patch path ${path} does not exist in ${object.kind}/${object.metadata.name}`);
      if (op === 'remove') delete parent[last];
      else parent[last] = value;
    } else {
      throw new KustomizeError(directory, `patch path ${path} does not exist in ${object.kind}/${object.metadata.name}`);
    }
  }
}

function applyPatches(objects: KubernetesObject[], patches: NonNullable<Kustomization['patches']>, directory: string): void {
  for (const { target, patch, ...rest } of patches) {
    const unsupported = Object.keys(rest);
    if (unsupported.length > 0) throw new KustomizeError(directory, `patch fields this renderer does not implement: ${unsupported.join(', ')}`);
    if (!target || typeof patch !== 'string') throw new KustomizeError(directory, 'a patch needs a target and an inline JSON 6902 patch');
    const targetFields = Object.keys(target).filter((field) => field !== 'kind' && field !== 'name');
    if (targetFields.length > 0) throw new KustomizeError(directory, `patch target fields this renderer does not implement: ${targetFields.join(', ')}`);
    const operations: unknown = parse(patch);
    if (!Array.isArray(operations)) throw new KustomizeError(directory, 'only JSON 6902 patches (a list of operations) are implemented');
    const matched = objects.filter((o) => (target.kind === undefined || o.kind === target.kind) && (target.name === undefined || o.metadata.name === target.name));
    if (matched.length === 0) throw new KustomizeError(directory, `patch target ${target.kind ?? '*'}/${target.name ?? '*'} matches nothing`);
    for (const object of matched) applyJsonPatch(object, operations as JsonPatchOperation[], directory);
  }
}

/**
 * Renders a kustomization as `kubectl kustomize` would, for the fields it uses: resources (files and
 * kustomization folders), then this level's patches, namespace, labels and images.
 */
export function renderKustomization(directory: string): KubernetesObject[] {
  const kustomization = readKustomization(directory);
  const objects: KubernetesObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(directory, resource);
    if (!existsSync(path)) throw new KustomizeError(directory, `resource ${resource} not found`);
    objects.push(...(statSync(path).isDirectory() ? renderKustomization(path) : readResourceFile(directory, resource)));
  }
  if (kustomization.patches) applyPatches(objects, kustomization.patches, directory);
  if (kustomization.namespace) {
    for (const object of objects) {
      if (object.kind === 'Namespace') object.metadata.name = kustomization.namespace;
      else if (!CLUSTER_SCOPED.has(object.kind)) object.metadata.namespace = kustomization.namespace;
    }
  }
  if (kustomization.labels) applyLabels(objects, kustomization.labels, directory);
  if (kustomization.images) applyImages(objects, kustomization.images);
  const seen = new Set<string>();
  for (const object of objects) {
    const id = `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    if (seen.has(id)) throw new KustomizeError(directory, `${id} is defined twice`);
    seen.add(id);
  }
  return objects;
}
